package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/accounts"
	"github.com/mdpress/mdpress/host/config"
	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// Credits are money: no request may be charged twice, none may render for
// free, and nothing may be lost when a process dies. Each case runs on both
// account stores; PostgreSQL adds two hosts sharing one database.
func TestCredits(t *testing.T) {
	pdfcheck.Require(t)
	eachStore(t, func(t *testing.T, st accountStore) {
		t.Run("burst spends exactly the balance", func(t *testing.T) { creditsBurst(t, st) })
		t.Run("failed render is refunded", func(t *testing.T) { failedRenderRefunded(t, st) })
		t.Run("host killed mid-burst", func(t *testing.T) { hostKilledMidBurst(t, st) })
		t.Run("meter killed mid-render", func(t *testing.T) { meterKilledMidRender(t, st) })
		t.Run("sink killed mid-render", func(t *testing.T) { sinkKilledMidRender(t, st) })
		t.Run("reservation expiring mid-render", func(t *testing.T) { expiredReservationNotDelivered(t, st) })
		if st.postgres() {
			t.Run("two hosts share one database", func(t *testing.T) { twoHostsShareCredits(t, st) })
		}
	})
}

const (
	burstSize    = 60
	burstCredits = 20
)

func burstBody(i int) any { return map[string]string{"markdown": fmt.Sprintf("# Burst %d", i)} }

// creditsBurst: 60 conversions race for 20 credits.
func creditsBurst(t *testing.T, st accountStore) {
	h := startHost(t, fpdf(), st.env())
	uid, key := h.account("pro", burstCredits)

	outs := burst([]*host{h}, key, burstSize, burstBody, nil)
	checkBurst(t, outs, burstCredits)
	if b := h.balance(key); b != 0 {
		t.Fatalf("balance after the burst: %d, want 0", b)
	}
	sum := checkLedger(t, st.open(t, h.DataDir, 0), uid, 0)
	if sum.byKind[accounts.LedgerReserve] != burstCredits || sum.byKind[accounts.LedgerRefund] != 0 {
		t.Fatalf("ledger: %v, want %d reserves and no refund", sum.byKind, burstCredits)
	}
}

// twoHostsShareCredits: the same burst split across two hosts on one
// PostgreSQL still buys exactly the balance.
func twoHostsShareCredits(t *testing.T, st accountStore) {
	// One data dir as well: an idempotent replay of binary output reads the
	// PDF the first host stored in its sink, which replicas must share.
	dir := t.TempDir()
	a := startHost(t, fpdf(), st.env(), withDataDir(dir))
	b := startHost(t, fpdf(), st.env(), withDataDir(dir))
	// Warm both up, so that neither loses the race for being cold.
	_, warm := a.account("pro", 2)
	for _, h := range []*host{a, b} {
		if resp, body := h.post(warm, map[string]string{"markdown": "# Warm"}); resp.StatusCode != http.StatusOK {
			t.Fatalf("warm-up: %d %s", resp.StatusCode, body)
		}
	}
	uid, key := a.account("pro", burstCredits)

	// Half the burst goes to each host; checkBurst sees every request
	// answered, so both hosts sold from the one balance. Which host wins
	// more of the race is up to the scheduler.
	outs := burst([]*host{a, b}, key, burstSize, burstBody, nil)
	checkBurst(t, outs, burstCredits)
	perHost := [2]int{}
	for i, o := range outs {
		if o.status == http.StatusOK {
			perHost[i%2]++
		}
	}
	if ba, bb := a.balance(key), b.balance(key); ba != 0 || bb != 0 {
		t.Fatalf("balance after the burst: %d on one host, %d on the other, want 0", ba, bb)
	}
	sum := checkLedger(t, st.open(t, a.DataDir, 0), uid, 0)
	if sum.byKind[accounts.LedgerReserve] != burstCredits {
		t.Fatalf("ledger: %v, want %d reserves", sum.byKind, burstCredits)
	}
	t.Logf("PDFs per host: %v", perHost)

	// One retried request, its copies racing through both hosts, is
	// charged once.
	_, retrier := a.account("pro", 5)
	outs = burst([]*host{a, b}, retrier, 10, func(int) any { return map[string]string{"markdown": "# Retried"} },
		map[string]string{"Idempotency-Key": "retry-1"})
	got := statuses(outs)
	if got[http.StatusOK] == 0 || got[http.StatusOK]+got[http.StatusTooManyRequests] != len(outs) {
		t.Fatalf("same Idempotency-Key on two hosts: statuses %v, want 200s and 429s (in progress)", got)
	}
	var first []byte
	for _, o := range outs {
		if o.status == http.StatusOK {
			if first == nil {
				first = o.body
			}
			if !isPDF(o.body) || !bytes.Equal(o.body, first) {
				t.Fatal("same Idempotency-Key on two hosts: the answers are not the same PDF")
			}
		}
	}
	if ba := a.balance(retrier); ba != 4 {
		t.Fatalf("same Idempotency-Key on two hosts: balance %d, want 4 (one charge)", ba)
	}
}

// checkBurst asserts that exactly want requests got their own PDF and the
// rest were refused for credits with the contract's error body.
func checkBurst(t *testing.T, outs []outcome, want int) {
	t.Helper()
	if got := statuses(outs); got[http.StatusOK] != want || got[http.StatusForbidden] != len(outs)-want {
		t.Fatalf("statuses %v, want %d x 200 and %d x 403", got, want, len(outs)-want)
	}
	for i, o := range outs {
		switch o.status {
		case http.StatusOK:
			if ct := o.header.Get("Content-Type"); ct != "application/pdf" || !isPDF(o.body) {
				t.Fatalf("request %d: 200 with %q, %d bytes, not a PDF", i, ct, len(o.body))
			}
			// Each answer is the document its request asked for.
			if words := strings.Fields(pdfcheck.Text(t, o.body)); len(words) < 2 || words[0] != "Burst" || words[1] != strconv.Itoa(i) {
				t.Fatalf("request %d got a PDF reading %q", i, words)
			}
		case http.StatusForbidden:
			e := decodeError(t, o.status, o.body)
			if e.Message != "InsufficientCredits" || !strings.Contains(e.Error, "credits") {
				t.Fatalf("request %d: 403 body %q does not say the credits ran out", i, o.body)
			}
		}
	}
}

// largeMarkdown is a document that keeps the fpdf renderer busy for a good
// part of a second, so that it can be killed mid-render.
func largeMarkdown(t *testing.T) string {
	return strings.Repeat(corpus(t, "large.md")+"\n\n", 8)
}

// failedRenderRefunded: SIGKILL the render plugin while it renders; that
// request fails with a safe 500 and costs nothing, and the relaunched
// plugin serves the next one.
func failedRenderRefunded(t *testing.T, st accountStore) {
	h := startHost(t, fpdf(), st.env())
	uid, key := h.account("pro", 5)
	md := largeMarkdown(t)

	renderer := h.plugin("render-fpdf")
	before := cpuTicks(renderer)
	client := burstClient()
	defer client.CloseIdleConnections()
	answer := make(chan outcome, 1)
	go func() {
		answer <- call(context.Background(), client, h.URL, key, map[string]string{"markdown": md}, nil)
	}()

	awaitBusy(t, renderer, before, answer)
	if err := syscall.Kill(renderer, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	o := <-answer
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.status != http.StatusInternalServerError {
		t.Fatalf("killed render: status %d, want 500: %.300s", o.status, o.body)
	}
	e := decodeError(t, o.status, o.body)
	low := strings.ToLower(string(o.body))
	for _, leak := range []string{"render-fpdf", "fpdf", "plugin", "/", "rpc", "eof", "connection", "sock", "pid"} {
		if strings.Contains(low, leak) {
			t.Errorf("500 body leaks %q: %s", leak, o.body)
		}
	}
	if !strings.Contains(e.Error, "no credit was charged") {
		t.Errorf("500 body does not tell the client it was not charged: %s", o.body)
	}
	if b := h.balance(key); b != 5 {
		t.Fatalf("balance after the failed render: %d, want 5 (unchanged)", b)
	}

	resp, body := h.post(key, map[string]string{"markdown": "# After the crash"})
	if resp.StatusCode != http.StatusOK || !isPDF(body) {
		t.Fatalf("next request after the crash: %d %.300s", resp.StatusCode, body)
	}
	if b := h.balance(key); b != 4 {
		t.Fatalf("balance after one success: %d, want 4", b)
	}
	sum := checkLedger(t, st.open(t, h.DataDir, 0), uid, 4)
	if sum.byKind[accounts.LedgerReserve] != 2 || sum.byKind[accounts.LedgerRefund] != 1 {
		t.Fatalf("ledger %v: want 2 reserves and 1 refund", sum.byKind)
	}
	if renderer == h.plugin("render-fpdf") {
		t.Fatal("the render plugin was not relaunched")
	}
}

// awaitBusy returns once the plugin process pid works on the request whose
// answer is to come on answer: the stage plugins do nothing between
// requests, so CPU time one burns after the request was sent (before) is
// this request's.
func awaitBusy(t *testing.T, pid int, before int64, answer <-chan outcome) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for cpuTicks(pid)-before < 5 {
		select {
		case o := <-answer:
			t.Fatalf("the request ended (%d, %v) before the plugin was seen working on it: make the document heavier", o.status, o.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the plugin never started working on the request")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// sinkKilledMidRender: SIGKILL the sink, idle, while a hosted conversion
// renders. The store that follows the render reaches the relaunched sink:
// the conversion is answered its URL and charged once. It was sent to the
// client the request took at its start, the dead process's, and failed
// with a 500 though nothing had reached any sink.
func sinkKilledMidRender(t *testing.T, st accountStore) {
	h := startHost(t, fpdf(), st.env())
	uid, key := h.account("pro", 5)
	body := map[string]string{"markdown": largeMarkdown(t), "output": "url"}

	renderer, sink := h.plugin("render-fpdf"), h.plugin("sink-disk")
	before := cpuTicks(renderer)
	client := burstClient()
	defer client.CloseIdleConnections()
	answer := make(chan outcome, 1)
	go func() { answer <- call(context.Background(), client, h.URL, key, body, nil) }()
	awaitBusy(t, renderer, before, answer)
	if err := syscall.Kill(sink, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	o := <-answer
	if o.err != nil || o.status != http.StatusOK {
		t.Fatalf("hosted conversion with the sink killed mid-render: %d %v %.300s", o.status, o.err, o.body)
	}
	var hosted struct{ URL string }
	if err := json.Unmarshal(o.body, &hosted); err != nil || hosted.URL == "" {
		t.Fatalf("answer %.300s: no URL (%v)", o.body, err)
	}
	resp, err := client.Get(hosted.URL)
	if err != nil {
		t.Fatal(err)
	}
	pdf, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !isPDF(pdf) {
		t.Fatalf("GET %s: %d, %d bytes (%v), want the PDF", hosted.URL, resp.StatusCode, len(pdf), err)
	}
	if b := h.balance(key); b != 4 {
		t.Fatalf("balance: %d, want 4 (one conversion charged)", b)
	}
	sum := checkLedger(t, st.open(t, h.DataDir, 0), uid, 4)
	if sum.byKind[accounts.LedgerReserve] != 1 || sum.byKind[accounts.LedgerRefund] != 0 {
		t.Fatalf("ledger %v: want 1 reserve and no refund", sum.byKind)
	}
	if sink == h.plugin("sink-disk") {
		t.Fatal("the sink was not relaunched")
	}
}

// meterKilledMidRender: SIGKILL the meter after it reserved, while the
// render runs. The conversion is answered and charged once by the
// relaunched meter, so a retry with the same Idempotency-Key replays it
// at once instead of waiting out a reservation left open.
func meterKilledMidRender(t *testing.T, st accountStore) {
	h := startHost(t, fpdf(), st.env())
	uid, key := h.account("pro", 5)
	body := map[string]string{"markdown": largeMarkdown(t), "output": "url"}
	idem := map[string]string{"Idempotency-Key": "meter-killed-mid-render"}

	renderer, meter := h.plugin("render-fpdf"), h.plugin("meter-credits")
	before := cpuTicks(renderer)
	client := burstClient()
	defer client.CloseIdleConnections()
	answer := make(chan outcome, 1)
	go func() { answer <- call(context.Background(), client, h.URL, key, body, idem) }()
	// The renderer burns CPU only once the reservation is made.
	awaitBusy(t, renderer, before, answer)
	if err := syscall.Kill(meter, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	o := <-answer
	if o.err != nil || o.status != http.StatusOK {
		t.Fatalf("conversion with the meter killed mid-render: %d %v %.300s", o.status, o.err, o.body)
	}

	// The charge follows the answer: a retry may find it still under way
	// (429, Retry-After: 1) for a moment, not for the meter's reservation TTL.
	var retry outcome
	for end := time.Now().Add(10 * time.Second); ; {
		retry = call(context.Background(), client, h.URL, key, body, idem)
		if retry.status != http.StatusTooManyRequests || time.Now().After(end) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if retry.status != http.StatusOK || retry.header.Get(replayed) != "true" || !bytes.Equal(retry.body, o.body) {
		t.Fatalf("retry with the same Idempotency-Key: %d replayed=%q %.300s, want the first answer %s replayed",
			retry.status, retry.header.Get(replayed), retry.body, o.body)
	}
	if b := h.balance(key); b != 4 {
		t.Fatalf("balance: %d, want 4 (one conversion charged)", b)
	}
	sum := checkLedger(t, st.open(t, h.DataDir, 0), uid, 4)
	if sum.byKind[accounts.LedgerReserve] != 1 || sum.byKind[accounts.LedgerRefund] != 0 {
		t.Fatalf("ledger %v: want 1 reserve and no refund", sum.byKind)
	}
}

// hostKilledMidBurst: SIGKILL the host while conversions are in flight and
// restart it on the same store. Every delivered PDF stays charged, every
// reservation left open is released after its TTL, and a client retrying
// the cut requests with their Idempotency-Keys ends with one PDF and one
// charge per request.
func hostKilledMidBurst(t *testing.T, st accountStore) {
	const (
		ttl      = 2 * time.Second
		interval = 500 * time.Millisecond
		initial  = 100
		total    = 60
		workers  = 6
		killAt   = 10 // PDFs received before the kill
	)
	cfg := writeConfig(t, func(c *config.Config) {
		c.Plugins["meter-credits"] = map[string]any{"reservationTTL": ttl.String(), "releaseInterval": interval.String()}
	})
	dir := t.TempDir()
	h := startHost(t, fpdf(), st.env(), cfg, withDataDir(dir))
	uid, key := h.account("pro", initial)
	tree := descendants(h.pid())
	idem := func(i int) map[string]string { return map[string]string{"Idempotency-Key": fmt.Sprintf("burst-%d", i)} }

	var (
		mu        sync.Mutex
		delivered int
		cut       []int // sent, but no answer came back
		other     []outcome
		killed    atomic.Bool
		killedAt  time.Time
		killOnce  sync.Once
	)
	kill := func() {
		killOnce.Do(func() {
			killedAt = time.Now()
			killed.Store(true)
			_ = h.cmd.Process.Signal(syscall.SIGKILL)
		})
	}
	client := burstClient()
	defer client.CloseIdleConnections()
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if killed.Load() {
					continue // never sent: it cannot have been charged
				}
				o := call(context.Background(), client, h.URL, key, burstBody(i), idem(i))
				mu.Lock()
				switch {
				case o.err != nil:
					cut = append(cut, i)
				case o.status == http.StatusOK && isPDF(o.body):
					if delivered++; delivered == killAt {
						kill()
					}
				default:
					other = append(other, o)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range total {
		if killed.Load() {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	kill() // in case every request finished first
	<-h.done
	// Plugins die with their host (parent-death signal); none may linger
	// holding the store.
	waitGone(t, tree, 10*time.Second)
	for _, o := range other {
		t.Errorf("a request got %d %.200s instead of a PDF", o.status, o.body)
	}

	restarted := startHost(t, fpdf(), st.env(), cfg, withDataDir(dir))
	// The restarted meter sweeps at once and then every interval; a few
	// sweeps after the TTL every reservation of the dead host is released.
	time.Sleep(time.Until(killedAt.Add(ttl + 4*interval)))

	balance := restarted.balance(key)
	store := st.open(t, dir, ttl)
	sum := checkLedger(t, store, uid, balance)
	charged := initial - int(balance)
	expired := 0
	for _, e := range sum.entries {
		if e.Kind == accounts.LedgerRefund && strings.HasPrefix(e.Reason, "expired") {
			expired++
		}
	}
	t.Logf("before the kill: %d PDFs delivered, %d requests cut; charged %d; %d reservations released on expiry",
		delivered, len(cut), charged, expired)
	// Every delivered PDF is charged. A cut request may have been committed
	// just before the host died: a charge whose PDF the client has not
	// seen yet, never more than one per cut request.
	if charged < delivered || charged > delivered+len(cut) {
		t.Fatalf("charged %d credits for %d delivered PDFs and %d cut requests", charged, delivered, len(cut))
	}
	if n, err := store.ReleaseExpired(context.Background()); err != nil || n != 0 {
		t.Fatalf("after the restart %d reservations were still open (err %v)", n, err)
	}

	// The client retries what was cut: what was committed replays, what was
	// released is charged now.
	replays := 0
	for _, i := range cut {
		resp, body := restarted.do("POST", convertPath, key, burstBody(i), idem(i))
		if resp.StatusCode != http.StatusOK || !isPDF(body) {
			t.Fatalf("retry of request %d: %d %.200s", i, resp.StatusCode, body)
		}
		if words := strings.Fields(pdfcheck.Text(t, body)); len(words) < 2 || words[1] != strconv.Itoa(i) {
			t.Fatalf("retry of request %d got a PDF reading %q", i, words)
		}
		if resp.Header.Get(replayed) == "true" {
			replays++
		}
	}
	if replays != charged-delivered {
		t.Errorf("%d retries replayed, but %d cut requests had been charged", replays, charged-delivered)
	}
	want := int64(initial - delivered - len(cut))
	if b := restarted.balance(key); b != want {
		t.Fatalf("after the retries: balance %d, want %d (one credit per request)", b, want)
	}
	checkLedger(t, store, uid, want)
}

// expiredReservationNotDelivered: a conversion that outlives its
// reservation's TTL finds its credit already given back by the sweeper; it
// must not hand out the PDF uncharged.
func expiredReservationNotDelivered(t *testing.T, st accountStore) {
	cfg := writeConfig(t, func(c *config.Config) {
		c.Plugins["meter-credits"] = map[string]any{"reservationTTL": "100ms", "releaseInterval": "20ms"}
	})
	h := startHost(t, fpdf(), st.env(), cfg)
	uid, key := h.account("pro", 5)
	resp, body := h.post(key, map[string]string{"markdown": largeMarkdown(t)})

	balance := h.balance(key)
	sum := checkLedger(t, st.open(t, h.DataDir, 0), uid, balance)
	expired := 0
	for _, e := range sum.entries {
		if e.Kind == accounts.LedgerRefund && strings.HasPrefix(e.Reason, "expired") {
			expired++
		}
	}
	if expired != 1 {
		t.Fatalf("the reservation did not expire during the conversion (ledger %v): make the document heavier", sum.byKind)
	}
	if resp.StatusCode == http.StatusOK && balance == 5 {
		t.Fatalf("a PDF of %d bytes was delivered after its reservation expired and was refunded: rendered for free", len(body))
	}
	if resp.StatusCode != http.StatusInternalServerError || balance != 5 {
		t.Fatalf("status %d, balance %d: want a 500 that charges nothing (%.300s)", resp.StatusCode, balance, body)
	}
	decodeError(t, resp.StatusCode, body)
	t.Logf("answer: %s", body)
}
