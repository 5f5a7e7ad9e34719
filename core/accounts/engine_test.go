package accounts

import (
	"strings"
	"testing"
)

// TestExecLaterFailsTransaction: a statement held back by execLater that
// fails takes its whole transaction down, whether its error comes with the
// next statement or with the commit, and the connection stays usable.
func TestExecLaterFailsTransaction(t *testing.T) {
	for _, b := range backends {
		t.Run(b.driver, func(t *testing.T) {
			ctx := t.Context()
			s := open(t, b, b.newDB(t))
			db := s.(*store).db
			a := must[Account](t)(s.CreateAccount(ctx, "free", ptr[int64](5)))
			insert := `INSERT INTO accounts (` + accountCols + `) VALUES ($1, 'free', $2, 0, 0)`

			for _, tc := range []struct {
				name string
				next func(q querier) error // after the failing statement; nil: commit
			}{
				{"at the next statement", func(q querier) error {
					var n int64
					return q.queryRow(ctx, `SELECT credits FROM accounts WHERE id = $1`, a.ID).Scan(&n)
				}},
				{"at the commit", nil},
			} {
				t.Run(tc.name, func(t *testing.T) {
					err := db.write(ctx, func(q querier) error {
						if err := q.execLater(ctx, "first", insert, "usr_kept", 1); err != nil {
							return err
						}
						if _, err := q.exec(ctx, `UPDATE accounts SET credits = 4 WHERE id = $1`, a.ID); err != nil {
							return err
						}
						// credits >= 0 is checked: this one fails.
						if err := q.execLater(ctx, "negative", insert, "usr_bad", -1); err != nil {
							return err
						}
						if tc.next != nil {
							return tc.next(q)
						}
						return nil
					})
					if err == nil || !strings.Contains(err.Error(), "negative") {
						t.Fatalf("write: %v, want the failed statement's error", err)
					}
					if got := must[Account](t)(s.Account(ctx, a.ID)).Credits; got != 5 {
						t.Errorf("balance %d after a failed transaction, want 5", got)
					}
					all := must[[]Account](t)(s.Accounts(ctx))
					if len(all) != 1 {
						t.Errorf("%d accounts after a failed transaction, want 1", len(all))
					}
				})
			}
			// Every connection is still good.
			for range 8 {
				if _, _, err := s.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: 1}); err != nil && !strings.Contains(err.Error(), "out of credits") {
					t.Fatal(err)
				}
			}
			checkLedger(t, s, a.ID)
		})
	}
}
