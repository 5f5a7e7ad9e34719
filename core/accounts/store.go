package accounts

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// store implements Store over either engine; the SQL is the same for both.
type store struct {
	db    engine
	plans map[string]stage.Plan
	opts  options
}

// now is the store's clock, cut to the microseconds the schema keeps so that
// what a call returns equals what a later read returns.
func (s *store) now() time.Time { return s.opts.now().UTC().Truncate(time.Microsecond) }

func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

func (s *store) Plan(name string) (stage.Plan, error) {
	p, ok := s.plans[name]
	if !ok {
		return stage.Plan{}, stage.Errorf(stage.CodeInvalid, "unknown plan %q", name)
	}
	return p, nil
}

const accountCols = `id, plan, credits, last_reset_us, created_us`

func scanAccount(r row) (Account, error) {
	var a Account
	var reset, created int64
	err := r.Scan(&a.ID, &a.Plan, &a.Credits, &reset, &created)
	a.LastReset, a.CreatedAt = fromMicros(reset), fromMicros(created)
	return a, err
}

// getAccount reads one account; lock holds its row until the transaction
// that q belongs to ends.
func (s *store) getAccount(ctx context.Context, q querier, id string, lock bool) (Account, error) {
	query := `SELECT ` + accountCols + ` FROM accounts WHERE id = $1`
	if lock {
		query += s.db.forUpdate()
	}
	a, err := scanAccount(q.queryRow(ctx, query, id))
	if errors.Is(err, errNoRows) {
		return Account{}, stage.Errorf(stage.CodeNotFound, "account %q not found", id)
	}
	if err != nil {
		return Account{}, fmt.Errorf("read account: %w", err)
	}
	return a, nil
}

func resetDue(a Account, now time.Time) bool { return !now.Before(a.NextReset()) }

// applyReset gives a locked account its plan's monthly credits when a month
// has passed since the last reset. An account whose plan is no longer
// configured keeps its balance until an operator moves it.
func (s *store) applyReset(ctx context.Context, q querier, a Account, now time.Time) (Account, error) {
	plan, ok := s.plans[a.Plan]
	if !ok || !resetDue(a, now) {
		return a, nil
	}
	// The reset is dated when it was due, not when a request found it due,
	// so that the next one stays a month after the last anniversary.
	due := a.dueReset(now)
	if _, err := q.exec(ctx, `UPDATE accounts SET credits = $2, last_reset_us = $3 WHERE id = $1`,
		a.ID, plan.MonthlyCredits, due.UnixMicro()); err != nil {
		return a, fmt.Errorf("reset balance: %w", err)
	}
	delta := plan.MonthlyCredits - a.Credits
	a.Credits, a.LastReset = plan.MonthlyCredits, due
	return a, addLedger(ctx, q, LedgerEntry{
		UserID: a.ID, Kind: LedgerReset, Delta: delta, Balance: a.Credits, At: now,
		Reason: fmt.Sprintf("monthly reset to plan %s", plan.Name),
	})
}

// addLedger writes e with the transaction's next statement or its commit:
// nothing in a transaction reads the ledger back.
func addLedger(ctx context.Context, q querier, e LedgerEntry) error {
	return q.execLater(ctx, "write ledger", `INSERT INTO ledger (user_id, kind, delta, balance, reason, reservation_id, created_us)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		e.UserID, e.Kind, e.Delta, e.Balance, e.Reason, e.ReservationID, e.At.UnixMicro())
}

func (s *store) CreateAccount(ctx context.Context, planName string, credits *int64) (Account, error) {
	a, err := s.newAccount(planName, credits)
	if err != nil {
		return Account{}, err
	}
	if err := s.db.write(ctx, func(q querier) error { return s.insertAccount(ctx, q, a) }); err != nil {
		return Account{}, err
	}
	return a, nil
}

func (s *store) CreateAccountWithKey(ctx context.Context, planName string, credits *int64) (Account, string, KeyInfo, error) {
	a, err := s.newAccount(planName, credits)
	if err != nil {
		return Account{}, "", KeyInfo{}, err
	}
	key := newKey()
	info := KeyInfo{ID: newID("key_"), UserID: a.ID, CreatedAt: a.CreatedAt}
	err = s.db.write(ctx, func(q querier) error {
		if err := s.insertAccount(ctx, q, a); err != nil {
			return err
		}
		return insertKey(ctx, q, info, key)
	})
	if err != nil {
		return Account{}, "", KeyInfo{}, err
	}
	return a, key, info, nil
}

// newAccount is an account on planName, not yet stored.
func (s *store) newAccount(planName string, credits *int64) (Account, error) {
	plan, err := s.Plan(planName)
	if err != nil {
		return Account{}, err
	}
	balance := plan.MonthlyCredits
	if credits != nil {
		if *credits < 0 {
			return Account{}, stage.Errorf(stage.CodeInvalid, "starting credits must not be negative, got %d", *credits)
		}
		balance = *credits
	}
	now := s.now()
	return Account{ID: newID("usr_"), Plan: plan.Name, Credits: balance, LastReset: now, CreatedAt: now}, nil
}

func (s *store) insertAccount(ctx context.Context, q querier, a Account) error {
	if err := q.execLater(ctx, "insert account", `INSERT INTO accounts (`+accountCols+`) VALUES ($1, $2, $3, $4, $5)`,
		a.ID, a.Plan, a.Credits, a.LastReset.UnixMicro(), a.CreatedAt.UnixMicro()); err != nil {
		return err
	}
	return addLedger(ctx, q, LedgerEntry{
		UserID: a.ID, Kind: LedgerCreate, Delta: a.Credits, Balance: a.Credits, At: a.CreatedAt,
		Reason: "opening balance on plan " + a.Plan,
	})
}

func (s *store) Account(ctx context.Context, userID string) (Account, error) {
	a, err := s.getAccount(ctx, s.db, userID, false)
	now := s.now()
	if err != nil || !resetDue(a, now) {
		return a, err
	}
	return s.locked(ctx, userID, func(q querier, a Account) (Account, error) { return a, nil })
}

func (s *store) Accounts(ctx context.Context) ([]Account, error) {
	all, err := collect(ctx, s.db, func(r rows) (Account, error) { return scanAccount(r) },
		`SELECT `+accountCols+` FROM accounts ORDER BY created_us, id`)
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	now := s.now()
	for i, a := range all {
		if _, ok := s.plans[a.Plan]; ok && resetDue(a, now) {
			if all[i], err = s.Account(ctx, a.ID); err != nil {
				return nil, err
			}
		}
	}
	return all, nil
}

func (s *store) Credit(ctx context.Context, userID string, delta int64, reason string) (Account, error) {
	if delta == 0 {
		return Account{}, stage.Errorf(stage.CodeInvalid, "a credit of zero changes nothing")
	}
	return s.locked(ctx, userID, func(q querier, a Account) (Account, error) {
		// Open reservations may still come back by refund, which cannot
		// fail: room is kept for them, or a refund that overflowed would
		// fail for good and stop the sweeper for every account.
		var open int64
		if delta > 0 {
			if err := q.queryRow(ctx, `SELECT CAST(COALESCE(SUM(credits), 0) AS BIGINT) FROM reservations
				WHERE user_id = $1 AND state = $2`, a.ID, stateReserved).Scan(&open); err != nil {
				return a, fmt.Errorf("read open reservations: %w", err)
			}
		}
		switch {
		case delta > 0 && a.Credits > math.MaxInt64-delta-open:
			return a, stage.Errorf(stage.CodeInvalid, "balance would overflow: %d credits, %d reserved, %d added", a.Credits, open, delta)
		case a.Credits+delta < 0:
			// As text: -delta of the most negative int64 is itself.
			return a, stage.Errorf(stage.CodeInvalid, "balance would go below zero: %d credits left, %s taken", a.Credits, strconv.FormatInt(delta, 10)[1:])
		}
		a.Credits += delta
		if err := q.execLater(ctx, "credit", `UPDATE accounts SET credits = $2 WHERE id = $1`, a.ID, a.Credits); err != nil {
			return a, err
		}
		return a, addLedger(ctx, q, LedgerEntry{
			UserID: a.ID, Kind: LedgerCredit, Delta: delta, Balance: a.Credits, Reason: reason, At: s.now(),
		})
	})
}

func (s *store) SetPlan(ctx context.Context, userID, planName string) (Account, error) {
	plan, err := s.Plan(planName)
	if err != nil {
		return Account{}, err
	}
	return s.locked(ctx, userID, func(q querier, a Account) (Account, error) {
		a.Plan = plan.Name
		if _, err := q.exec(ctx, `UPDATE accounts SET plan = $2 WHERE id = $1`, a.ID, a.Plan); err != nil {
			return a, fmt.Errorf("set plan: %w", err)
		}
		return a, nil
	})
}

// locked runs fn in a write transaction on userID's locked account, after
// any monthly reset that is due, and returns what fn returns.
func (s *store) locked(ctx context.Context, userID string, fn func(q querier, a Account) (Account, error)) (Account, error) {
	var out Account
	err := s.db.write(ctx, func(q querier) error {
		a, err := s.getAccount(ctx, q, userID, true)
		if err != nil {
			return err
		}
		if a, err = s.applyReset(ctx, q, a, s.now()); err != nil {
			return err
		}
		out, err = fn(q, a)
		return err
	})
	if err != nil {
		return Account{}, err
	}
	return out, nil
}

func (s *store) Ledger(ctx context.Context, userID string) ([]LedgerEntry, error) {
	if _, err := s.getAccount(ctx, s.db, userID, false); err != nil {
		return nil, err
	}
	entries, err := collect(ctx, s.db, func(r rows) (LedgerEntry, error) {
		var e LedgerEntry
		var at int64
		err := r.Scan(&e.Seq, &e.UserID, &e.Kind, &e.Delta, &e.Balance, &e.Reason, &e.ReservationID, &at)
		e.At = fromMicros(at)
		return e, err
	}, `SELECT seq, user_id, kind, delta, balance, reason, reservation_id, created_us
		FROM ledger WHERE user_id = $1 ORDER BY seq`, userID)
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	return entries, nil
}

func (s *store) Ping(ctx context.Context) error {
	if deadline, ok := ctx.Deadline(); ok {
		// Give up with a quarter of the time left, so that a health check
		// hears that the database does not answer, rather than its caller
		// running out of time and taking the plugin for hung.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Until(deadline)*3/4)
		defer cancel()
	}
	return s.db.ping(ctx)
}

func (s *store) Close() error { return s.db.close() }
