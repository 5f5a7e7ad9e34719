package e2e

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/accounts"
	"github.com/mdpress/mdpress/core/accounts/pgtest"
)

// TestAccountDatabaseOutage: PostgreSQL crashes under a running host (as
// `pg_ctl stop -m immediate` does) and comes back. Meanwhile conversions
// fail with the contract's 500 and charge nothing, /readyz says 503, and
// the auth and meter plugins, alive and waiting on the database, are not
// relaunched: a relaunch cannot configure without the database, and its
// retries' backoff kept the host refusing every request for up to a
// minute after PostgreSQL was back. Once it is back the host serves again
// within seconds, without a restart, and the balance and ledger hold
// exactly the conversions delivered.
func TestAccountDatabaseOutage(t *testing.T) {
	o := startOutageHost(t)
	if err := o.srv.Crash(o.ctx); err != nil {
		t.Fatal(err)
	}
	// Past three health checks (2 s apart), which relaunch a plugin that
	// fails them for its own reasons.
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		resp, body := o.convert()
		if resp.StatusCode != http.StatusInternalServerError {
			t.Fatalf("database down: %d %.300s, want 500", resp.StatusCode, body)
		}
		if e := decodeError(t, resp.StatusCode, body); e.Message != "ServiceUnavailable" {
			t.Fatalf("database down: %s, want ServiceUnavailable", body)
		}
	}
	if resp, body := o.h.do("GET", "/readyz", "", nil, nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with the database down: %d %s, want 503", resp.StatusCode, body)
	}
	o.samePlugins(t, "while the database was down")

	if err := o.srv.Restart(o.ctx); err != nil {
		t.Fatal(err)
	}
	o.servesAgain(t)
	if b := o.h.balance(o.key); b != 8 {
		t.Fatalf("balance %d, want 8: two conversions delivered, the refused ones free", b)
	}
	checkLedger(t, o.st.open(t, o.h.DataDir, 0), o.uid, 8)
}

// TestAccountDatabaseHangs: PostgreSQL stops answering without closing
// its connections (a hung server, a network dropping packets). The auth
// and meter plugins' health checks answer that the database is down
// before the host's deadline, so that the host takes them for waiting on
// it, not for hung: it does not relaunch them, which would cut the calls
// in flight, and serves again as soon as the database answers.
func TestAccountDatabaseHangs(t *testing.T) {
	o := startOutageHost(t)
	if err := o.srv.Freeze(); err != nil {
		t.Fatal(err)
	}
	thawed := false
	defer func() {
		if !thawed {
			o.srv.Thaw()
		}
	}()
	// Past three health checks of each plugin: a check that hangs takes
	// its whole 2 s, and the checks run one after the other.
	time.Sleep(14 * time.Second)
	if resp, body := o.h.do("GET", "/readyz", "", nil, nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with the database hung: %d %s, want 503", resp.StatusCode, body)
	}
	o.samePlugins(t, "while the database hung")
	if err := o.srv.Thaw(); err != nil {
		t.Fatal(err)
	}
	thawed = true
	o.servesAgain(t)
	o.samePlugins(t, "after the database answered again")
	checkLedger(t, o.st.open(t, o.h.DataDir, 0), o.uid, o.h.balance(o.key))
}

// TestChargeRetriedAfterOutage: PostgreSQL crashes while a PDF renders,
// between the reservation and the charge, and comes back a moment later.
// The client gets its PDF, and the charge that failed after the answer is
// made once the database is back, within seconds: a retry with the same
// Idempotency-Key replays it. The failed charge was left to the meter's
// sweeper, which refunded it ten minutes later, the PDF given away, and
// the retry was told the request was still in progress until then.
func TestChargeRetriedAfterOutage(t *testing.T) {
	o := startOutageHost(t)
	client := burstClient()
	defer client.CloseIdleConnections()
	body := map[string]string{"markdown": largeMarkdown(t)}
	idem := map[string]string{"Idempotency-Key": "charge-retried-after-outage"}
	a := o.deliverWhileDown(t, client, body, idem)
	if err := o.srv.Restart(o.ctx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	var retry outcome
	for {
		retry = call(o.ctx, client, o.h.URL, o.key, body, idem)
		if retry.status == http.StatusOK || time.Since(back) > 10*time.Second {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if retry.status != http.StatusOK || retry.header.Get(replayed) != "true" || !bytes.Equal(retry.body, a.body) {
		t.Fatalf("retry with the same Idempotency-Key %v after the database came back: %d replayed=%q %.300s, want the first answer replayed",
			time.Since(back).Round(time.Millisecond), retry.status, retry.header.Get(replayed), retry.body)
	}
	t.Logf("charged %v after the database came back", time.Since(back).Round(10*time.Millisecond))
	if b := o.h.balance(o.key); b != 8 {
		t.Fatalf("balance %d, want 8: two conversions charged", b)
	}
	sum := checkLedger(t, o.st.open(t, o.h.DataDir, 0), o.uid, 8)
	if sum.byKind[accounts.LedgerReserve] != 2 || sum.byKind[accounts.LedgerRefund] != 0 {
		t.Fatalf("ledger %v: want 2 reserves and no refund", sum.byKind)
	}
}

// TestChargeRetriesAbandonedAtShutdown: a shutdown while a charge is being
// retried gives it the drain window, then stops, saying how many it
// abandoned, rather than holding the host past the window.
func TestChargeRetriesAbandonedAtShutdown(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("..", "..", "configs", "mdpress.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	short := strings.Replace(string(base), "shutdownTimeout: 30s", "shutdownTimeout: 2s", 1)
	if short == string(base) {
		t.Fatal("configs/mdpress.yaml sets no shutdownTimeout of 30s")
	}
	cfg := filepath.Join(t.TempDir(), "mdpress.yaml")
	if err := os.WriteFile(cfg, []byte(short), 0o600); err != nil {
		t.Fatal(err)
	}
	o := startOutageHost(t, withArgs("--config", cfg))
	client := burstClient()
	defer client.CloseIdleConnections()
	o.deliverWhileDown(t, client, map[string]string{"markdown": largeMarkdown(t)}, nil)
	start := time.Now()
	o.h.stop()
	took := time.Since(start)
	counted := false
	for _, line := range strings.Split(o.h.logs.String(), "\n") {
		counted = counted || strings.Contains(line, "still being retried abandoned") && strings.Contains(line, "count=1")
	}
	if !counted {
		t.Fatalf("no log line counting the abandoned charge:\n%s", tail(o.h.logs.String(), 30))
	}
	t.Logf("shutdown took %v", took.Round(time.Millisecond))
	if took > 10*time.Second {
		t.Fatalf("shutdown took %v with a 2 s drain window", took.Round(time.Millisecond))
	}
}

// deliverWhileDown converts body and crashes the database while it renders,
// between the reservation and the charge: the client gets its PDF, and its
// charge fails after the answer.
func (o outageHost) deliverWhileDown(t *testing.T, client *http.Client, body any, hdr map[string]string) outcome {
	t.Helper()
	renderer := o.h.plugin("render-fpdf")
	before := cpuTicks(renderer)
	answer := make(chan outcome, 1)
	go func() { answer <- call(o.ctx, client, o.h.URL, o.key, body, hdr) }()
	// The renderer burns CPU only once the reservation is made.
	for cpuTicks(renderer)-before < 5 {
		select {
		case a := <-answer:
			t.Fatalf("the request ended (%d, %v) before the database could be crashed: make the document heavier", a.status, a.err)
		case <-o.ctx.Done():
			t.Fatal("the render plugin never started rendering")
		case <-time.After(2 * time.Millisecond):
		}
	}
	if err := o.srv.Crash(o.ctx); err != nil {
		t.Fatal(err)
	}
	a := <-answer
	if a.err != nil || a.status != http.StatusOK || !isPDF(a.body) {
		t.Fatalf("conversion with the database crashed mid-render: %d %v %.300s", a.status, a.err, a.body)
	}
	// The charge follows the answer.
	for end := time.Now().Add(5 * time.Second); !strings.Contains(o.h.logs.String(), "charge after the answer failed"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the charge did not fail: the database came down after it; make the document heavier")
		}
	}
	return a
}

// outageHost is a host on a PostgreSQL server of its own, which a test
// may crash or freeze, with an account of 10 credits that has converted
// once.
type outageHost struct {
	ctx     context.Context
	srv     *pgtest.Server
	st      accountStore
	h       *host
	uid     string
	key     string
	convert func() (*http.Response, []byte)
	before  map[int]string // the host's plugin processes
}

func startOutageHost(t *testing.T, opts ...hostOpt) outageHost {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	srv, err := pgtest.NewServer(ctx)
	if errors.Is(err, pgtest.ErrUnavailable) {
		t.Skipf("needs PostgreSQL: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Its own server, since the test crashes or freezes it; registered
	// first, so that it stops after the host.
	t.Cleanup(srv.Stop)
	dsn, _, err := srv.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st := accountStore{name: "postgres", dsn: dsn}
	h := startHost(t, append([]hostOpt{fpdf(), st.env()}, opts...)...)
	uid, key := h.account("pro", 10)
	convert := func() (*http.Response, []byte) { return h.post(key, map[string]string{"markdown": "# Outage"}) }
	if resp, body := convert(); resp.StatusCode != http.StatusOK || !isPDF(body) {
		t.Fatalf("before the outage: %d %.300s", resp.StatusCode, body)
	}
	return outageHost{ctx: ctx, srv: srv, st: st, h: h, uid: uid, key: key, convert: convert, before: children(h.pid())}
}

// samePlugins fails t when the auth or meter plugin is no longer the
// process it was.
func (o outageHost) samePlugins(t *testing.T, when string) {
	t.Helper()
	now := children(o.h.pid())
	for _, name := range []string{"auth-apikey", "meter-credits"} {
		if pidOf(o.before, name) != pidOf(now, name) {
			t.Errorf("%s relaunched %s (pid %d, now %d)", name, when, pidOf(o.before, name), pidOf(now, name))
		}
	}
}

// servesAgain waits until a conversion succeeds, for at most 10 s.
func (o outageHost) servesAgain(t *testing.T) {
	t.Helper()
	back := time.Now()
	for {
		resp, body := o.convert()
		if resp.StatusCode == http.StatusOK && isPDF(body) {
			break
		}
		if time.Since(back) > 10*time.Second {
			t.Fatalf("database back for %v, the host still answers %d %.300s", time.Since(back).Round(time.Second), resp.StatusCode, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("serving again %v after the database came back", time.Since(back).Round(10*time.Millisecond))
}

// pidOf returns the pid of the process called name in procs, or 0.
func pidOf(procs map[int]string, name string) int {
	for pid, n := range procs {
		if n == name {
			return pid
		}
	}
	return 0
}
