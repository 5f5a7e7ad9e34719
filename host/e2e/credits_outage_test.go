package e2e

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := pgtest.NewServer(ctx)
	if errors.Is(err, pgtest.ErrUnavailable) {
		t.Skipf("needs PostgreSQL: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Its own server, since it crashes it; registered first, so that it
	// stops after the host.
	t.Cleanup(srv.Stop)
	dsn, _, err := srv.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st := accountStore{name: "postgres", dsn: dsn}
	h := startHost(t, fpdf(), st.env())
	uid, key := h.account("pro", 10)
	convert := func() (*http.Response, []byte) { return h.post(key, map[string]string{"markdown": "# Outage"}) }
	if resp, body := convert(); resp.StatusCode != http.StatusOK || !isPDF(body) {
		t.Fatalf("before the outage: %d %.300s", resp.StatusCode, body)
	}
	before := children(h.pid())

	if err := srv.Crash(ctx); err != nil {
		t.Fatal(err)
	}
	// Past three health checks (2 s apart), which relaunch a plugin that
	// fails them for its own reasons.
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		resp, body := convert()
		if resp.StatusCode != http.StatusInternalServerError {
			t.Fatalf("database down: %d %.300s, want 500", resp.StatusCode, body)
		}
		if e := decodeError(t, resp.StatusCode, body); e.Message != "ServiceUnavailable" {
			t.Fatalf("database down: %s, want ServiceUnavailable", body)
		}
	}
	if resp, body := h.do("GET", "/readyz", "", nil, nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with the database down: %d %s, want 503", resp.StatusCode, body)
	}
	after := children(h.pid())
	for _, name := range []string{"auth-apikey", "meter-credits"} {
		if pidOf(before, name) != pidOf(after, name) {
			t.Errorf("%s relaunched while the database was down (pid %d, now %d)", name, pidOf(before, name), pidOf(after, name))
		}
	}

	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	for {
		resp, body := convert()
		if resp.StatusCode == http.StatusOK && isPDF(body) {
			break
		}
		if time.Since(back) > 10*time.Second {
			t.Fatalf("database back for %v, the host still answers %d %.300s", time.Since(back).Round(time.Second), resp.StatusCode, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("serving again %v after the database came back", time.Since(back).Round(10*time.Millisecond))
	if b := h.balance(key); b != 8 {
		t.Fatalf("balance %d, want 8: two conversions delivered, the refused ones free", b)
	}
	checkLedger(t, st.open(t, h.DataDir, 0), uid, 8)
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
