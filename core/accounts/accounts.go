package accounts

import (
	"context"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Store holds accounts, their API keys, balances and the credit ledger.
// Errors meant for clients are *stage.Error; anything else is internal.
type Store interface {
	// CreateAccount opens an account on plan. A nil credits starts it with
	// the plan's monthly credits.
	CreateAccount(ctx context.Context, plan string, credits *int64) (Account, error)
	// CreateAccountWithKey opens an account and issues its first API key
	// in one transaction: a failure leaves neither, where two calls could
	// leave an account that nobody holds a key for.
	CreateAccountWithKey(ctx context.Context, plan string, credits *int64) (Account, string, KeyInfo, error)
	// CreateKey issues an API key for userID. The key is returned once; only
	// its hash is kept.
	CreateKey(ctx context.Context, userID string) (key string, info KeyInfo, err error)
	// RevokeKey stops a key from authenticating. Revoking twice is a no-op.
	RevokeKey(ctx context.Context, keyID string) error
	// Keys lists userID's keys, oldest first.
	Keys(ctx context.Context, userID string) ([]KeyInfo, error)
	// Authenticate returns the account behind key. An unknown, revoked or
	// malformed key is a CodeUnauthenticated error. It only reads, so the
	// balance it reports may predate a monthly reset that is due.
	Authenticate(ctx context.Context, key string) (Account, KeyInfo, error)

	// Account returns userID's account, applying a monthly reset when due.
	Account(ctx context.Context, userID string) (Account, error)
	// Accounts lists every account, oldest first, with resets applied.
	Accounts(ctx context.Context) ([]Account, error)
	// Credit adds delta (negative to take away) to the balance; the
	// balance never goes below zero.
	Credit(ctx context.Context, userID string, delta int64, reason string) (Account, error)
	// SetPlan moves the account to plan. The balance is left as it is; the
	// new plan's credits arrive at the next monthly reset.
	SetPlan(ctx context.Context, userID, plan string) (Account, error)
	// Plan returns the configured plan called name.
	Plan(name string) (stage.Plan, error)

	// Reserve deducts p.Credits now. When p.IdempotencyKey matches an
	// earlier committed request with the same RequestHash (within 24 h) it
	// charges nothing and returns that request's result as a *Replay.
	// Too few credits is a CodeForbidden error.
	Reserve(ctx context.Context, p ReserveParams) (Reservation, *Replay, error)
	// Commit makes a reservation final and stores result for replays.
	// Committing twice is a no-op; committing a reservation that was
	// refunded (released after the TTL) is a CodeTimeout error, so that
	// nothing is delivered uncharged.
	Commit(ctx context.Context, reservationID, result string) error
	// Refund returns a reservation's credits.
	Refund(ctx context.Context, reservationID, reason string) error
	// ReleaseExpired refunds reservations open for longer than the
	// reservation TTL, so a host that died mid-request leaves none stuck.
	// It returns how many it refunded.
	ReleaseExpired(ctx context.Context) (int, error)
	// PruneFinished deletes the committed and refunded reservations that
	// no replay, commit or refund can ask for again (finished more than
	// the idempotency window and the reservation TTL ago), with the
	// results they keep: hosted files' ids among them. The ledger keeps
	// every balance change and its reservation's id. It returns how many
	// it deleted.
	PruneFinished(ctx context.Context) (int, error)
	// Ledger lists userID's balance changes, oldest first.
	Ledger(ctx context.Context, userID string) ([]LedgerEntry, error)

	// Ping checks that the database answers, and gives up before ctx's
	// deadline, so that its caller can still answer in time.
	Ping(ctx context.Context) error
	Close() error
}

// Account is one customer of the service.
type Account struct {
	ID        string // "usr_..."
	Plan      string
	Credits   int64
	LastReset time.Time // UTC
	CreatedAt time.Time // UTC
}

// NextReset is when the balance next returns to the plan's monthly credits:
// the first monthly anniversary of the account's creation after its last
// reset. A day the month lacks is its last day (an account opened on 31
// January resets on the last day of February, then on 31 March), and a
// reset applied late, on the account's next request, does not move the
// ones after it.
func (a Account) NextReset() time.Time {
	return anniversary(a.CreatedAt, anniversaries(a.CreatedAt, a.LastReset)+1)
}

// dueReset is the reset a balance due one at now gets: the latest
// anniversary by then.
func (a Account) dueReset(now time.Time) time.Time {
	return anniversary(a.CreatedAt, anniversaries(a.CreatedAt, now))
}

// anniversary is the k-th monthly anniversary of anchor, in UTC.
func anniversary(anchor time.Time, k int) time.Time {
	anchor = anchor.UTC()
	y, m, d := anchor.Date()
	first := time.Date(y, m+time.Month(k), 1, anchor.Hour(), anchor.Minute(), anchor.Second(), anchor.Nanosecond(), time.UTC)
	days := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(d, days)-1)
}

// anniversaries counts the monthly anniversaries of anchor after it and
// by t.
func anniversaries(anchor, t time.Time) int {
	anchor, t = anchor.UTC(), t.UTC()
	k := (t.Year()-anchor.Year())*12 + int(t.Month()) - int(anchor.Month())
	if k > 0 && anniversary(anchor, k).After(t) {
		k--
	}
	return max(k, 0)
}

// KeyInfo describes an API key without the key itself.
type KeyInfo struct {
	ID        string // "key_..."
	UserID    string
	CreatedAt time.Time
	RevokedAt time.Time // zero while the key is valid
}

// Revoked reports whether the key was revoked.
func (k KeyInfo) Revoked() bool { return !k.RevokedAt.IsZero() }

// ReserveParams asks for credits.
type ReserveParams struct {
	UserID  string
	Credits int64
	// IdempotencyKey, scoped to the user, makes a retry with the same
	// RequestHash replay the committed result instead of charging again.
	IdempotencyKey string
	RequestHash    string
}

// Reservation is credits taken from a balance, awaiting Commit or Refund.
type Reservation struct {
	ID        string // "res_..."
	UserID    string
	Credits   int64
	Balance   int64 // the account's balance after the deduction
	CreatedAt time.Time
}

// Replay is the stored result of an earlier committed request.
type Replay struct {
	Result string
}

// LedgerEntry is one change of a balance.
type LedgerEntry struct {
	Seq           int64
	UserID        string
	Kind          string // one of the Ledger* constants
	Delta         int64
	Balance       int64 // after the change
	Reason        string
	ReservationID string
	At            time.Time
}

// Ledger entry kinds.
const (
	LedgerCreate  = "create"  // opening balance
	LedgerReserve = "reserve" // credits taken by Reserve
	LedgerRefund  = "refund"  // credits given back by Refund or ReleaseExpired
	LedgerCredit  = "credit"  // an operator's adjustment
	LedgerReset   = "reset"   // the monthly reset
)
