package accounts

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mdpress/mdpress/core/accounts/pgtest"
	"github.com/mdpress/mdpress/sdk/stage"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// backend is one engine the shared suite runs against.
type backend struct {
	driver string
	// newDB returns the DSN of an empty database.
	newDB func(t testing.TB) string
	// dump returns every byte the database keeps, for searching.
	dump func(t *testing.T, dsn string) []byte
}

var backends = []backend{
	{
		driver: DriverSQLite,
		newDB:  func(t testing.TB) string { return filepath.Join(t.TempDir(), "data", "mdpress.db") },
		dump: func(t *testing.T, path string) []byte {
			var all []byte
			for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
				b, err := os.ReadFile(path + suffix)
				if err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
				all = append(all, b...)
			}
			return all
		},
	},
	{
		driver: DriverPostgres,
		newDB:  func(t testing.TB) string { return pgtest.Start(t) },
		dump: func(t *testing.T, dsn string) []byte {
			conn, err := pgx.Connect(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(t.Context())
			var all bytes.Buffer
			for _, table := range []string{"accounts", "api_keys", "reservations", "ledger", "schema_migrations"} {
				var rows string
				err := conn.QueryRow(t.Context(),
					`SELECT COALESCE(string_agg(row_to_json(t)::text, E'\n'), '') FROM `+table+` t`).Scan(&rows)
				if err != nil {
					t.Fatal(err)
				}
				all.WriteString(rows)
			}
			return all.Bytes()
		},
	},
}

var testPlans = []stage.Plan{
	{Name: "free", MonthlyCredits: 50, Watermark: true, RateLimitPerMin: 60},
	{Name: "pro", MonthlyCredits: 5000, RetentionDays: 30},
}

// clock is a settable time source safe for concurrent readers.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock(t time.Time) *clock { return &clock{now: t} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// open opens a Store on dsn and closes it when t ends.
func open(t *testing.T, b backend, dsn string, opts ...Option) Store {
	t.Helper()
	s, err := Open(t.Context(), b.driver, dsn, testPlans, opts...)
	if err != nil {
		t.Fatalf("open %s: %v", b.driver, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func wantCode(t *testing.T, err error, want stage.Code) {
	t.Helper()
	var se *stage.Error
	if !errors.As(err, &se) {
		t.Fatalf("error = %v, want a *stage.Error with code %v", err, want)
	}
	if se.Code != want {
		t.Fatalf("error code = %v (%v), want %v", se.Code, err, want)
	}
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func ptr[T any](v T) *T { return &v }

// checkLedger asserts the invariant that an account's ledger adds up to its
// balance, entry by entry.
func checkLedger(t *testing.T, s Store, userID string) []LedgerEntry {
	t.Helper()
	a, err := s.Account(t.Context(), userID) // first, so that a due reset is in the ledger
	if err != nil {
		t.Fatal(err)
	}
	entries, err := s.Ledger(t.Context(), userID)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for i, e := range entries {
		sum += e.Delta
		if e.Balance != sum {
			t.Errorf("ledger entry %d (%s): balance %d, running sum %d", i, e.Kind, e.Balance, sum)
		}
	}
	if sum != a.Credits {
		t.Errorf("ledger sums to %d, balance is %d", sum, a.Credits)
	}
	return entries
}
