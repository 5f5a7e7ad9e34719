package accounts

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mdpress/mdpress/core/accounts/pgtest"
)

// TestPostgresSessionsEnded: PostgreSQL ends every session (a restart, a
// failover, pg_terminate_backend) and is back at once. The pool still
// holds the connections used within the last second, which it does not
// ping; each call on a request's path then goes through on a new
// connection, rather than fail a client's request or drop the charge of
// a PDF already delivered, and each is applied once.
func TestPostgresSessionsEnded(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.Start(t)
	s := open(t, backends[1], dsn)
	a := must[Account](t)(s.CreateAccount(ctx, "pro", ptr[int64](10)))
	key, _, err := s.CreateKey(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	endSessions := func() {
		t.Helper()
		if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
		// pg_terminate_backend only signals: wait until the sessions are gone.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			var n int
			if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d sessions still open", n)
			}
		}
	}

	var first, second Reservation
	steps := []struct {
		name string
		call func() error
	}{
		{"authenticate", func() error { _, _, err := s.Authenticate(ctx, key); return err }},
		{"reserve", func() (err error) {
			first, _, err = s.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: 1})
			return err
		}},
		{"commit", func() error { return s.Commit(ctx, first.ID, `{"fileId":"f"}`) }},
		{"reserve again", func() (err error) {
			second, _, err = s.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: 1})
			return err
		}},
		{"refund", func() error { return s.Refund(ctx, second.ID, "test") }},
		{"read the balance", func() error { _, err := s.Account(ctx, a.ID); return err }},
	}
	for _, step := range steps {
		// The step before used the pool a moment ago.
		endSessions()
		if err := step.call(); err != nil {
			t.Fatalf("%s after the server ended the sessions: %v", step.name, err)
		}
	}
	if got := must[Account](t)(s.Account(ctx, a.ID)).Credits; got != 9 {
		t.Fatalf("balance %d, want 9: one conversion charged, one refunded", got)
	}
	kinds := map[string]int{}
	for _, e := range checkLedger(t, s, a.ID) {
		kinds[e.Kind]++
	}
	if kinds[LedgerReserve] != 2 || kinds[LedgerRefund] != 1 {
		t.Fatalf("ledger %v, want 2 reserves and 1 refund", kinds)
	}
}
