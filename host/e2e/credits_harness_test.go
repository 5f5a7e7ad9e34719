package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mdpress/mdpress/core/accounts"
	"github.com/mdpress/mdpress/core/accounts/pgtest"
	"github.com/mdpress/mdpress/host/config"
)

// accountStore is where hosts keep accounts: SQLite in the data dir (the
// default) or a PostgreSQL database that several hosts can share.
type accountStore struct {
	name string
	dsn  string // postgres only
}

func (s accountStore) postgres() bool { return s.dsn != "" }

// env points a host, and the CLI run through it, at the store.
func (s accountStore) env() hostOpt {
	if !s.postgres() {
		return withEnv()
	}
	return withEnv("MDPRESS_ACCOUNTS_DRIVER=postgres", "MDPRESS_ACCOUNTS_DSN="+s.dsn)
}

// open reads the store behind h directly, as an operator's tool would.
// ttl > 0 sets the reservation TTL that ReleaseExpired uses.
func (s accountStore) open(t testing.TB, dataDir string, ttl time.Duration) accounts.Store {
	t.Helper()
	c, err := config.Parse(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	driver, dsn := accounts.DriverSQLite, filepath.Join(dataDir, "mdpress.db")
	if s.postgres() {
		driver, dsn = accounts.DriverPostgres, s.dsn
	}
	var opts []accounts.Option
	if ttl > 0 {
		opts = append(opts, accounts.WithReservationTTL(ttl))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := accounts.Open(ctx, driver, dsn, c.StagePlans(), opts...)
	if err != nil {
		t.Fatalf("open %s store: %v", s.name, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// postgresServer starts one PostgreSQL server on first use and hands out a
// fresh database per call. It belongs to one top-level test, whose cleanup
// stops it: this package's TestMain has no hook for a server shared by all.
type postgresServer struct {
	once sync.Once
	srv  *pgtest.Server
	err  error
}

// newPostgresServer returns a lazily started server stopped when t ends.
func newPostgresServer(t *testing.T) *postgresServer {
	p := &postgresServer{}
	t.Cleanup(func() {
		if p.srv != nil {
			p.srv.Stop()
		}
	})
	return p
}

// store returns a store on a new, empty database dropped when t ends, or
// skips t when this machine cannot run PostgreSQL.
func (p *postgresServer) store(t *testing.T) accountStore {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p.once.Do(func() { p.srv, p.err = pgtest.NewServer(ctx) })
	if errors.Is(p.err, pgtest.ErrUnavailable) {
		t.Skipf("PostgreSQL cases skipped: %v", p.err)
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	dsn, name, err := p.srv.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Registered before any host of t starts, so it runs after they stop.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := p.srv.DropDatabase(ctx, name); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return accountStore{name: "postgres", dsn: dsn}
}

// eachStore runs fn once per account store, as subtests named after them.
func eachStore(t *testing.T, fn func(t *testing.T, st accountStore)) {
	pg := newPostgresServer(t)
	t.Run("sqlite", func(t *testing.T) { fn(t, accountStore{name: "sqlite"}) })
	t.Run("postgres", func(t *testing.T) { fn(t, pg.store(t)) })
}

// writeConfig writes the embedded default configuration, changed by edit,
// and returns an option that hands it to the host and its CLI alike (the
// CLI needs the same plans to create accounts on them).
func writeConfig(t testing.TB, edit func(c *config.Config)) hostOpt {
	t.Helper()
	c, err := config.Parse(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	edit(c)
	b, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mdpress.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return withEnv("MDPRESS_CONFIG=" + path)
}

// fpdf selects the render backend that needs no browser.
func fpdf() hostOpt { return withArgs("--backend", "fpdf") }

// errorBody is the contract's error body.
type errorBody struct {
	Error   string         `json:"error"`
	Details map[string]any `json:"details"`
	Message string         `json:"message"`
	Hint    string         `json:"hint"`
	Size    string         `json:"size"`
}

// decodeError checks that body is the contract's JSON error body.
func decodeError(t testing.TB, status int, body []byte) errorBody {
	t.Helper()
	var e errorBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error == "" {
		t.Fatalf("status %d: not an error body (%v): %q", status, err, body)
	}
	return e
}

// balance is the account's balance as GET /v1/user/info reports it.
func (h *host) balance(key string) int64 {
	h.t.Helper()
	resp, body := h.do("GET", "/v1/user/info", key, nil, nil)
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("user info: %d %s", resp.StatusCode, body)
	}
	var info struct {
		Subscription struct {
			CurrentCredits *int64 `json:"currentCredits"`
		} `json:"subscription"`
	}
	if err := json.Unmarshal(body, &info); err != nil || info.Subscription.CurrentCredits == nil {
		h.t.Fatalf("user info body %q: %v", body, err)
	}
	return *info.Subscription.CurrentCredits
}

// ledgerSummary counts a ledger's entries by kind.
type ledgerSummary struct {
	byKind  map[string]int
	entries []accounts.LedgerEntry
}

// checkLedger asserts that userID's ledger explains balance: every entry's
// balance is the previous one plus its delta, none is negative, and the
// deltas, opening balance included, sum to balance.
func checkLedger(t testing.TB, st accounts.Store, userID string, balance int64) ledgerSummary {
	t.Helper()
	entries, err := st.Ledger(context.Background(), userID)
	if err != nil {
		t.Fatal(err)
	}
	sum := ledgerSummary{byKind: map[string]int{}, entries: entries}
	var running int64
	for i, e := range entries {
		running += e.Delta
		sum.byKind[e.Kind]++
		if e.Balance != running || e.Balance < 0 {
			t.Fatalf("ledger entry %d (%s %+d) says balance %d, running sum is %d", i, e.Kind, e.Delta, e.Balance, running)
		}
	}
	if running != balance {
		t.Fatalf("ledger sums to %d, balance is %d (%d entries: %v)", running, balance, len(entries), sum.byKind)
	}
	return sum
}

// outcome is one answer of a burst; err is set when no answer came.
type outcome struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// call sends one conversion without failing the test, so that it can run
// on any goroutine.
func call(ctx context.Context, client *http.Client, url, key string, body any, hdr map[string]string) outcome {
	b, err := json.Marshal(body)
	if err != nil {
		return outcome{err: err}
	}
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/v1/pdf/markdown", bytes.NewReader(b))
	if err != nil {
		return outcome{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return outcome{err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return outcome{status: resp.StatusCode, header: resp.Header, body: data, err: err}
}

// burstClient opens as many connections as a burst needs at once.
func burstClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: 128, DisableCompression: true},
		Timeout:   2 * time.Minute,
	}
}

// burst sends n conversions at once, request i to hosts[i%len(hosts)] with
// body(i), released together so that they race for the same credits.
func burst(hosts []*host, key string, n int, body func(i int) any, hdr map[string]string) []outcome {
	client := burstClient()
	defer client.CloseIdleConnections()
	out := make([]outcome, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = call(context.Background(), client, hosts[i%len(hosts)].URL, key, body(i), hdr)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// statuses counts outcomes by status; -1 counts transport errors.
func statuses(outs []outcome) map[int]int {
	m := map[int]int{}
	for _, o := range outs {
		if o.err != nil {
			m[-1]++
			continue
		}
		m[o.status]++
	}
	return m
}

// isPDF reports whether b looks like a complete PDF file.
func isPDF(b []byte) bool {
	return bytes.HasPrefix(b, []byte("%PDF-")) && bytes.Contains(b[max(0, len(b)-64):], []byte("%%EOF"))
}

// plugin returns the pid of h's child process called name.
func (h *host) plugin(name string) int {
	h.t.Helper()
	return childNamed(h.t, h.pid(), name)
}

// cpuTicks is the user+system CPU time pid has used, in clock ticks.
func cpuTicks(pid int) int64 {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return -1
	}
	var utime, stime int64
	fmt.Sscan(fields[11], &utime)
	fmt.Sscan(fields[12], &stime)
	return utime + stime
}

// waitGone waits until none of pids is alive.
func waitGone(t testing.TB, pids []int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, p := range pids {
		for alive(p) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still alive %v after its host died", p, within)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
