package credits

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/accounts"
	"github.com/mdpress/mdpress/core/accounts/pgtest"
	"github.com/mdpress/mdpress/sdk/stage"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var plans = []stage.Plan{
	{Name: "free", MonthlyCredits: 50, Watermark: true, RateLimitPerMin: 60},
	{Name: "pro", MonthlyCredits: 5000, RetentionDays: 30},
}

var backends = []struct {
	name string
	req  func(t testing.TB) *stage.ConfigureRequest
}{
	{"sqlite", func(t testing.TB) *stage.ConfigureRequest {
		return &stage.ConfigureRequest{DataDir: t.TempDir(), Accounts: stage.AccountsConfig{Driver: "sqlite"}, Plans: plans}
	}},
	{"postgres", func(t testing.TB) *stage.ConfigureRequest {
		return &stage.ConfigureRequest{Accounts: stage.AccountsConfig{Driver: "postgres", DSN: pgtest.Start(t)}, Plans: plans}
	}},
}

func newMeter(t *testing.T, req *stage.ConfigureRequest, opts ...accounts.Option) *Meter {
	t.Helper()
	m := New(slog.New(slog.NewTextHandler(io.Discard, nil)), opts...)
	t.Cleanup(func() { m.Close() })
	if _, err := m.Configure(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	return m
}

// cliStore opens the store the way `mdpress accounts` does, beside the plugin.
func cliStore(t testing.TB, req *stage.ConfigureRequest) accounts.Store {
	s, err := accounts.OpenConfigured(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newAccount(t *testing.T, s accounts.Store, plan string, credits int64) accounts.Account {
	a, err := s.CreateAccount(t.Context(), plan, &credits)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func wantCode(t *testing.T, err error, want stage.Code) {
	t.Helper()
	var se *stage.Error
	if !errors.As(err, &se) || se.Code != want {
		t.Fatalf("error = %v, want code %v", err, want)
	}
}

func TestMeter(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			req := b.req(t)
			m := newMeter(t, req)
			acct := newAccount(t, cliStore(t, req), "free", 3)
			balance := func() int64 {
				t.Helper()
				resp, err := m.Account(ctx, &stage.AccountRequest{UserID: acct.ID})
				if err != nil {
					t.Fatal(err)
				}
				return resp.CurrentCredits
			}

			info, err := m.Account(ctx, &stage.AccountRequest{UserID: acct.ID})
			if err != nil {
				t.Fatal(err)
			}
			if info.UserID != acct.ID || info.Plan != plans[0] || info.CurrentCredits != 3 || !info.LastReset.Equal(acct.LastReset) {
				t.Errorf("account = %+v", info)
			}

			r1, err := m.Reserve(ctx, &stage.ReserveRequest{UserID: acct.ID, Credits: 1})
			if err != nil || r1.ReservationID == "" || r1.Replay != nil {
				t.Fatalf("reserve: %+v, %v", r1, err)
			}
			// The host answers before committing only when it knows the
			// reservation outlasts the commit.
			if r1.Held != accounts.DefaultReservationTTL {
				t.Errorf("reservation held %v, want the configured %v", r1.Held, accounts.DefaultReservationTTL)
			}
			if got := balance(); got != 2 {
				t.Errorf("balance after reserve: %d, want 2", got)
			}
			if _, err := m.Refund(ctx, &stage.RefundRequest{ReservationID: r1.ReservationID, Reason: "render failed"}); err != nil {
				t.Fatal(err)
			}
			if got := balance(); got != 3 {
				t.Errorf("balance after refund: %d, want 3", got)
			}

			r2, err := m.Reserve(ctx, &stage.ReserveRequest{UserID: acct.ID, Credits: 1, IdempotencyKey: "k1", RequestHash: "h1"})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := m.Commit(ctx, &stage.CommitRequest{ReservationID: r2.ReservationID, Result: "file-1"}); err != nil {
					t.Fatal(err)
				}
			}
			again, err := m.Reserve(ctx, &stage.ReserveRequest{UserID: acct.ID, Credits: 1, IdempotencyKey: "k1", RequestHash: "h1"})
			if err != nil || again.Replay == nil || again.Replay.Result != "file-1" {
				t.Fatalf("retry: %+v, %v; want a replay of file-1", again, err)
			}
			_, err = m.Reserve(ctx, &stage.ReserveRequest{UserID: acct.ID, Credits: 1, IdempotencyKey: "k1", RequestHash: "h2"})
			wantCode(t, err, stage.CodeInvalid)
			if got := balance(); got != 2 {
				t.Errorf("balance after one commit and a replay: %d, want 2", got)
			}

			_, err = m.Reserve(ctx, &stage.ReserveRequest{UserID: acct.ID, Credits: 3})
			wantCode(t, err, stage.CodeForbidden)
			if !strings.Contains(stage.SafeMessage(err), "out of credits") {
				t.Errorf("message %q", stage.SafeMessage(err))
			}
			_, err = m.Commit(ctx, &stage.CommitRequest{ReservationID: "res_unknown"})
			wantCode(t, err, stage.CodeNotFound)
			_, err = m.Account(ctx, &stage.AccountRequest{UserID: "usr_unknown"})
			wantCode(t, err, stage.CodeNotFound)
			if err := m.Health(ctx); err != nil {
				t.Errorf("health: %v", err)
			}
		})
	}
}

// TestTwoMeters is two hosts, each with its own meter plugin, sharing one
// account store.
func TestTwoMeters(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			req := b.req(t)
			meters := []*Meter{newMeter(t, req), newMeter(t, req)}
			acct := newAccount(t, cliStore(t, req), "free", 20)

			var ok, refused atomic.Int64
			var wg sync.WaitGroup
			for i := range 60 {
				m := meters[i%2]
				wg.Go(func() {
					r, err := m.Reserve(t.Context(), &stage.ReserveRequest{UserID: acct.ID, Credits: 1})
					if stage.CodeOf(err) == stage.CodeForbidden {
						refused.Add(1)
						return
					}
					if err == nil {
						_, err = m.Commit(t.Context(), &stage.CommitRequest{ReservationID: r.ReservationID})
					}
					if err != nil {
						t.Error(err)
						return
					}
					ok.Add(1)
				})
			}
			wg.Wait()
			if ok.Load() != 20 || refused.Load() != 40 {
				t.Errorf("%d charged, %d refused; want 20 and 40", ok.Load(), refused.Load())
			}
		})
	}
}

// TestSweeper: a reservation that nobody finishes (its host died) comes back
// without anyone calling Refund.
func TestSweeper(t *testing.T) {
	req := backends[0].req(t)
	req.Config = []byte(`{"reservationTTL": "100ms", "releaseInterval": 0.02}`)
	m := newMeter(t, req)
	cli := cliStore(t, req)
	acct := newAccount(t, cli, "free", 5)

	if _, err := m.Reserve(t.Context(), &stage.ReserveRequest{UserID: acct.ID, Credits: 2}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, err := cli.Account(t.Context(), acct.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a.Credits == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stuck reservation was not refunded: balance %d", a.Credits)
		}
		time.Sleep(10 * time.Millisecond)
	}
	ledger, err := cli.Ledger(t.Context(), acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	if last := ledger[len(ledger)-1]; last.Kind != accounts.LedgerRefund || !strings.HasPrefix(last.Reason, "expired") {
		t.Errorf("last ledger entry = %+v, want an expiry refund", last)
	}

	m.mu.RLock()
	st := m.cur
	m.mu.RUnlock()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-st.done:
	default:
		t.Error("the sweeper still runs after Close")
	}
}

func TestLifecycle(t *testing.T) {
	ctx := t.Context()
	m := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := m.Close(); err != nil {
		t.Errorf("close before configure: %v", err)
	}
	_, err := m.Reserve(ctx, &stage.ReserveRequest{UserID: "usr_x", Credits: 1})
	wantCode(t, err, stage.CodeUnavailable)
	wantCode(t, m.Health(ctx), stage.CodeUnavailable)

	req := backends[0].req(t)
	for range 2 { // a second Configure replaces the first
		if _, err := m.Configure(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Health(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
	_, err = m.Account(ctx, &stage.AccountRequest{UserID: "usr_x"})
	wantCode(t, err, stage.CodeUnavailable)

	bad := backends[0].req(t)
	bad.Config = []byte(`{"reservationTTL": "soon"}`)
	_, err = m.Configure(ctx, bad)
	wantCode(t, err, stage.CodeInvalid)
	if err := m.Close(); err != nil {
		t.Errorf("close after a failed configure: %v", err)
	}
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		raw     string
		want    Config
		mention string // non-empty: an error naming this
	}{
		{name: "empty", raw: "", want: Config{accounts.DefaultReservationTTL, DefaultReleaseInterval}},
		{name: "empty object", raw: "{}", want: Config{10 * time.Minute, time.Minute}},
		{name: "strings", raw: `{"reservationTTL": "15m", "releaseInterval": "30s"}`, want: Config{15 * time.Minute, 30 * time.Second}},
		{name: "seconds", raw: `{"reservationTTL": 90, "releaseInterval": 0.5}`, want: Config{90 * time.Second, 500 * time.Millisecond}},
		{name: "unknown key", raw: `{"ttl": "1m"}`, mention: "ttl"},
		{name: "bad duration", raw: `{"reservationTTL": "soon"}`, mention: "reservationTTL"},
		{name: "zero", raw: `{"releaseInterval": "0s"}`, mention: "releaseInterval"},
		{name: "negative", raw: `{"reservationTTL": -1}`, mention: "reservationTTL"},
		{name: "wrong type", raw: `{"reservationTTL": true}`, mention: "reservationTTL"},
		{name: "trailing", raw: `{} x`, mention: "trailing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseConfig([]byte(tc.raw))
			if tc.mention != "" {
				wantCode(t, err, stage.CodeInvalid)
				if !strings.Contains(stage.SafeMessage(err), tc.mention) {
					t.Errorf("message %q does not name %q", stage.SafeMessage(err), tc.mention)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
