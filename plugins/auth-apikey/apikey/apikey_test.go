package apikey

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mdpress/mdpress/core/accounts"
	"github.com/mdpress/mdpress/core/accounts/pgtest"
	"github.com/mdpress/mdpress/sdk/stage"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var plans = []stage.Plan{
	{Name: "free", MonthlyCredits: 50, Watermark: true, RateLimitPerMin: 60},
	{Name: "pro", MonthlyCredits: 5000, RetentionDays: 30},
}

// backends give a ConfigureRequest for each account store: SQLite through
// the default <DataDir>/mdpress.db, and a fresh PostgreSQL database.
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

// syncBuffer collects log output from concurrent goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newAuth(t *testing.T) (*Authenticator, *syncBuffer) {
	logs := &syncBuffer{}
	a := New(slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { a.Close() })
	return a, logs
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

func wantCode(t *testing.T, err error, want stage.Code) {
	t.Helper()
	var se *stage.Error
	if !errors.As(err, &se) || se.Code != want {
		t.Fatalf("error = %v, want code %v", err, want)
	}
}

func TestAuthenticate(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			req := b.req(t)
			req.Config = []byte(`{}`)
			auth, logs := newAuth(t)
			resp, err := auth.Configure(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Info.Name != "auth-apikey" {
				t.Errorf("info = %+v", resp.Info)
			}
			if err := auth.Health(ctx); err != nil {
				t.Errorf("health: %v", err)
			}

			cli := cliStore(t, req)
			acct, err := cli.CreateAccount(ctx, "pro", nil)
			if err != nil {
				t.Fatal(err)
			}
			key, info, err := cli.CreateKey(ctx, acct.ID)
			if err != nil {
				t.Fatal(err)
			}
			got, err := auth.Authenticate(ctx, &stage.AuthenticateRequest{Token: key})
			if err != nil {
				t.Fatal(err)
			}
			want := stage.Principal{UserID: acct.ID, KeyID: info.ID, Plan: plans[1]}
			if got.Principal != want {
				t.Errorf("principal = %+v, want %+v", got.Principal, want)
			}

			other, _, err := cli.CreateKey(ctx, acct.ID)
			if err != nil {
				t.Fatal(err)
			}
			if err := cli.RevokeKey(ctx, info.ID); err != nil {
				t.Fatal(err)
			}
			for name, token := range map[string]string{
				"revoked":   key,
				"unknown":   "mdp_" + strings.Repeat("a", 52),
				"empty":     "",
				"malformed": "not a key",
				"bearer":    "Bearer " + other,
			} {
				t.Run(name, func(t *testing.T) {
					_, err := auth.Authenticate(ctx, &stage.AuthenticateRequest{Token: token})
					wantCode(t, err, stage.CodeUnauthenticated)
					if msg := stage.SafeMessage(err); msg != "invalid API key" {
						t.Errorf("message %q", msg)
					}
				})
			}
			if _, err := auth.Authenticate(ctx, &stage.AuthenticateRequest{Token: other}); err != nil {
				t.Errorf("the unrevoked key: %v", err)
			}
			for _, k := range []string{key, other} {
				if strings.Contains(logs.String(), k) || strings.Contains(logs.String(), k[4:]) {
					t.Errorf("a key reached the log")
				}
			}
		})
	}
}

func TestPlanNoLongerConfigured(t *testing.T) {
	ctx := t.Context()
	req := backends[0].req(t)
	cli := cliStore(t, req)
	acct, _ := cli.CreateAccount(ctx, "pro", nil)
	key, _, err := cli.CreateKey(ctx, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	req.Plans = plans[:1] // the operator dropped "pro"
	auth, _ := newAuth(t)
	if _, err := auth.Configure(ctx, req); err != nil {
		t.Fatal(err)
	}
	_, err = auth.Authenticate(ctx, &stage.AuthenticateRequest{Token: key})
	wantCode(t, err, stage.CodeForbidden)
}

func TestConfigure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		config  string
		driver  string
		dsn     string
		want    stage.Code // -1: success
		mention string
	}{
		{name: "nil", want: -1},
		{name: "empty object", config: "{}", want: -1},
		{name: "null", config: "null", want: -1},
		{name: "unknown key", config: `{"cacheTTL": "1m"}`, want: stage.CodeInvalid, mention: "cacheTTL"},
		{name: "not an object", config: `[]`, want: stage.CodeInvalid},
		{name: "trailing data", config: `{} {}`, want: stage.CodeInvalid},
		{name: "unknown driver", driver: "mysql", want: stage.CodeInvalid, mention: "mysql"},
		{name: "postgres down", driver: "postgres", dsn: "postgres://postgres@127.0.0.1:1/x?connect_timeout=2", want: stage.CodeUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			auth, _ := newAuth(t)
			req := &stage.ConfigureRequest{Config: []byte(tc.config), DataDir: t.TempDir(), Plans: plans,
				Accounts: stage.AccountsConfig{Driver: tc.driver, DSN: tc.dsn}}
			_, err := auth.Configure(t.Context(), req)
			if tc.want == -1 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, tc.want)
			if !strings.Contains(stage.SafeMessage(err), tc.mention) {
				t.Errorf("message %q does not name %q", stage.SafeMessage(err), tc.mention)
			}
		})
	}
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	auth, _ := newAuth(t)
	if err := auth.Close(); err != nil {
		t.Errorf("close before configure: %v", err)
	}
	_, err := auth.Authenticate(ctx, &stage.AuthenticateRequest{Token: "x"})
	wantCode(t, err, stage.CodeUnavailable)
	wantCode(t, auth.Health(ctx), stage.CodeUnavailable)

	req := backends[0].req(t)
	for range 2 { // a second Configure replaces the first
		if _, err := auth.Configure(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if err := auth.Health(ctx); err != nil {
		t.Fatal(err)
	}
	if err := auth.Close(); err != nil {
		t.Fatal(err)
	}
	if err := auth.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	wantCode(t, auth.Health(ctx), stage.CodeUnavailable)
}
