package accounts

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Reservation states.
const (
	stateReserved  = "reserved"
	stateCommitted = "committed"
	stateRefunded  = "refunded"
)

// maxIdempotencyKey bounds what a client can make the store keep per request.
const maxIdempotencyKey = 255

func (s *store) Reserve(ctx context.Context, p ReserveParams) (Reservation, *Replay, error) {
	switch {
	case p.Credits <= 0:
		return Reservation{}, nil, stage.Errorf(stage.CodeInvalid, "credits to reserve must be positive, got %d", p.Credits)
	case len(p.IdempotencyKey) > maxIdempotencyKey:
		return Reservation{}, nil, stage.Errorf(stage.CodeInvalid, "Idempotency-Key longer than %d bytes", maxIdempotencyKey)
	}
	var res Reservation
	var replay *Replay
	err := s.db.write(ctx, func(q querier) error {
		now := s.now()
		a, taken, err := s.deduct(ctx, q, p.UserID, p.Credits, now)
		if err != nil {
			return err
		}
		if !taken {
			res, replay, err = s.reserveLocked(ctx, q, p, now)
			return err
		}
		if p.IdempotencyKey != "" {
			if replay, err = s.priorRequest(ctx, q, p, now); err != nil {
				return err
			}
			if replay != nil {
				return errReplay // rolls the deduction back
			}
		}
		res = Reservation{ID: newID("res_"), UserID: a.ID, Credits: p.Credits, Balance: a.Credits, CreatedAt: now}
		return s.recordReservation(ctx, q, res, p, a.LastReset)
	})
	switch {
	case errors.Is(err, errReplay):
		return Reservation{}, replay, nil
	case err != nil || replay != nil:
		return Reservation{}, replay, err
	}
	return res, nil, nil
}

// errReplay ends a transaction that found a replay after deducting.
var errReplay = errors.New("replay")

// deduct takes n credits in the one statement that also locks the account's
// row, which is what almost every Reserve comes down to. It reports false,
// with nothing changed, when the account is unknown, has too few credits or
// is due a monthly reset: reserveLocked decides those.
func (s *store) deduct(ctx context.Context, q querier, userID string, n int64, now time.Time) (Account, bool, error) {
	a := Account{ID: userID}
	var reset, created int64
	err := q.queryRow(ctx, `UPDATE accounts SET credits = credits - $2 WHERE id = $1 AND credits >= $2
		RETURNING plan, credits, last_reset_us, created_us`, userID, n).Scan(&a.Plan, &a.Credits, &reset, &created)
	switch {
	case errors.Is(err, errNoRows):
		return a, false, nil
	case err != nil:
		return a, false, fmt.Errorf("deduct credits: %w", err)
	}
	a.LastReset, a.CreatedAt = fromMicros(reset), fromMicros(created)
	if _, ok := s.plans[a.Plan]; ok && resetDue(a, now) {
		// The reset replaces the balance the credits came out of: put them
		// back and let reserveLocked reset first.
		if _, err := q.exec(ctx, `UPDATE accounts SET credits = credits + $2 WHERE id = $1`, userID, n); err != nil {
			return a, false, fmt.Errorf("undo deduction: %w", err)
		}
		return a, false, nil
	}
	return a, true, nil
}

// reserveLocked is Reserve the long way, for what deduct leaves: it locks
// the account, applies a due reset, then checks idempotency and credits.
func (s *store) reserveLocked(ctx context.Context, q querier, p ReserveParams, now time.Time) (Reservation, *Replay, error) {
	a, err := s.getAccount(ctx, q, p.UserID, true)
	if err != nil {
		return Reservation{}, nil, err
	}
	if a, err = s.applyReset(ctx, q, a, now); err != nil {
		return Reservation{}, nil, err
	}
	if p.IdempotencyKey != "" {
		if replay, err := s.priorRequest(ctx, q, p, now); err != nil || replay != nil {
			return Reservation{}, replay, err // a reset applied above stays
		}
	}
	if a.Credits < p.Credits {
		return Reservation{}, nil, s.outOfCredits(a, p.Credits)
	}
	// The row is locked, so the guard never fails; it is there so that a
	// change to the locking can never turn into an overspend.
	n, err := q.exec(ctx, `UPDATE accounts SET credits = credits - $2 WHERE id = $1 AND credits >= $2`,
		a.ID, p.Credits)
	if err != nil {
		return Reservation{}, nil, fmt.Errorf("deduct credits: %w", err)
	}
	if n != 1 {
		return Reservation{}, nil, s.outOfCredits(a, p.Credits)
	}
	res := Reservation{ID: newID("res_"), UserID: a.ID, Credits: p.Credits, Balance: a.Credits - p.Credits, CreatedAt: now}
	return res, nil, s.recordReservation(ctx, q, res, p, a.LastReset)
}

// recordReservation writes a deduction's reservation, made under the
// account's monthly reset of lastReset, and its ledger entry.
func (s *store) recordReservation(ctx context.Context, q querier, res Reservation, p ReserveParams, lastReset time.Time) error {
	if err := q.execLater(ctx, "insert reservation", `INSERT INTO reservations (id, user_id, credits, state, idem_key, request_hash, created_us, reset_us)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		res.ID, res.UserID, res.Credits, stateReserved, p.IdempotencyKey, p.RequestHash, res.CreatedAt.UnixMicro(), lastReset.UnixMicro()); err != nil {
		return err
	}
	return addLedger(ctx, q, LedgerEntry{
		UserID: res.UserID, Kind: LedgerReserve, Delta: -res.Credits, Balance: res.Balance, ReservationID: res.ID, At: res.CreatedAt,
	})
}

// priorRequest looks for an earlier request with the same idempotency key
// inside the replay window. It returns a Replay for a committed one with the
// same hash, an error when the key cannot be used now, and nil, nil when the
// request should be charged: no earlier request, or one that was refunded.
func (s *store) priorRequest(ctx context.Context, q querier, p ReserveParams, now time.Time) (*Replay, error) {
	var state, hash, result string
	// The attempt that decides is the committed one, else one in
	// progress, else the latest refunded: by state, not by time alone,
	// since attempts stamped by hosts whose clocks differ may be out of
	// order.
	err := q.queryRow(ctx, `SELECT state, request_hash, result FROM reservations
		WHERE user_id = $1 AND idem_key = $2 AND created_us >= $3
		ORDER BY CASE state WHEN 'committed' THEN 0 WHEN 'reserved' THEN 1 ELSE 2 END, created_us DESC LIMIT 1`,
		p.UserID, p.IdempotencyKey, now.Add(-idempotencyWindow).UnixMicro()).Scan(&state, &hash, &result)
	switch {
	case errors.Is(err, errNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read idempotency key: %w", err)
	case state == stateRefunded:
		return nil, nil
	case hash != p.RequestHash:
		// Named as the request's own fields are (field, allowed), and
		// with what to do: the bare refusal left a client that changed
		// its document but not its key nothing to go on.
		e := stage.Errorf(stage.CodeInvalid, "Idempotency-Key reused with a different request: send a new key for a different document or options")
		e.Details = map[string]string{
			"field":   "Idempotency-Key",
			"allowed": "within 24 h of its first use, only the same body and options; a new key for anything else",
		}
		return nil, e
	case state == stateCommitted:
		return &Replay{Result: result}, nil
	default:
		return nil, stage.Errorf(stage.CodeBusy, "a request with this Idempotency-Key is still in progress")
	}
}

func (s *store) outOfCredits(a Account, needed int64) error {
	e := stage.Errorf(stage.CodeForbidden, "out of credits: %d left, %d needed", a.Credits, needed)
	e.Details = map[string]string{
		"credits": strconv.FormatInt(a.Credits, 10),
		"needed":  strconv.FormatInt(needed, 10),
	}
	if plan, ok := s.plans[a.Plan]; ok {
		next := a.NextReset().Format(time.RFC3339)
		e.Message += fmt.Sprintf("; the balance resets to %d on %s", plan.MonthlyCredits, next)
		e.Details["nextReset"] = next
	}
	return e
}

func (s *store) Commit(ctx context.Context, reservationID, result string) error {
	n, err := s.db.writeOne(ctx, `UPDATE reservations SET state = $2, result = $3, finished_us = $4
		WHERE id = $1 AND state = $5`,
		reservationID, stateCommitted, result, s.now().UnixMicro(), stateReserved)
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if n == 0 {
		// Finished already, or unknown. Finished is final, so reading the
		// state after the update still tells which.
		return committedAlready(ctx, s.db, reservationID)
	}
	return nil
}

func (s *store) Refund(ctx context.Context, reservationID, reason string) error {
	_, err := s.refund(ctx, reservationID, reason)
	return err
}

// refund returns a reservation's credits and reports whether this call did
// it. The account is locked before the reservation changes, the same order
// Reserve takes, so refunds and reserves on two hosts never deadlock.
func (s *store) refund(ctx context.Context, reservationID, reason string) (bool, error) {
	var done bool
	err := s.db.write(ctx, func(q querier) error {
		var userID string
		var credits, created, reset int64
		err := q.queryRow(ctx, `SELECT user_id, credits, created_us, reset_us FROM reservations WHERE id = $1`,
			reservationID).Scan(&userID, &credits, &created, &reset)
		if errors.Is(err, errNoRows) {
			return errNoReservation(reservationID)
		}
		if err != nil {
			return fmt.Errorf("read reservation: %w", err)
		}
		a, err := s.getAccount(ctx, q, userID, true)
		if err != nil {
			return err
		}
		now := s.now()
		n, err := q.exec(ctx, `UPDATE reservations SET state = $2, finished_us = $3 WHERE id = $1 AND state = $4`,
			reservationID, stateRefunded, now.UnixMicro(), stateReserved)
		if err != nil || n == 0 {
			return err
		}
		done = true
		// A monthly reset since the reservation already restored the
		// balance; giving the credits back as well would mint money. The
		// reset it was made under tells, where two hosts' clocks could
		// not; reservations from before that was kept go by time.
		resetSince := reset != a.LastReset.UnixMicro()
		if reset < 0 {
			resetSince = fromMicros(created).Before(a.LastReset)
		}
		if resetSince {
			return nil
		}
		a.Credits += credits
		if err := q.execLater(ctx, "refund credits", `UPDATE accounts SET credits = $2 WHERE id = $1`, a.ID, a.Credits); err != nil {
			return err
		}
		return addLedger(ctx, q, LedgerEntry{
			UserID: a.ID, Kind: LedgerRefund, Delta: credits, Balance: a.Credits,
			Reason: reason, ReservationID: reservationID, At: now,
		})
	})
	return done, err
}

func (s *store) ReleaseExpired(ctx context.Context) (int, error) {
	cutoff := s.now().Add(-s.opts.reservationTTL)
	ids, err := collect(ctx, s.db, func(r rows) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, `SELECT id FROM reservations WHERE state = $1 AND created_us < $2 ORDER BY created_us`,
		stateReserved, cutoff.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("find expired reservations: %w", err)
	}
	// One transaction per reservation keeps each lock short and takes locks
	// in the same order as Reserve.
	released := 0
	for _, id := range ids {
		done, err := s.refund(ctx, id, "expired: not finished within "+s.opts.reservationTTL.String())
		if err != nil {
			return released, err
		}
		if done {
			released++
		}
	}
	return released, nil
}

// pruneBatch bounds the rows one statement of PruneFinished deletes, so
// that it holds the write lock (SQLite's is the database's) for a moment
// at a time.
const pruneBatch = 1000

func (s *store) PruneFinished(ctx context.Context) (int, error) {
	// Past the idempotency window of its creation nothing reads a finished
	// reservation: no replay finds it, and no commit or refund comes later
	// than the reservation TTL.
	cutoff := s.now().Add(-idempotencyWindow - s.opts.reservationTTL).UnixMicro()
	pruned := 0
	for {
		n, err := s.db.writeOne(ctx, `DELETE FROM reservations WHERE id IN (
			SELECT id FROM reservations WHERE state <> $1 AND finished_us < $2 LIMIT $3)`,
			stateReserved, cutoff, pruneBatch)
		pruned += int(n)
		if err != nil {
			return pruned, fmt.Errorf("prune finished reservations: %w", err)
		}
		if n < pruneBatch {
			return pruned, nil
		}
	}
}

// committedAlready makes a second Commit a no-op. A refunded reservation
// cannot be committed: its credits are back on the balance (the sweeper
// released it after the TTL), so the result must not be delivered as if
// paid for.
func committedAlready(ctx context.Context, q querier, id string) error {
	var state string
	err := q.queryRow(ctx, `SELECT state FROM reservations WHERE id = $1`, id).Scan(&state)
	switch {
	case errors.Is(err, errNoRows):
		return errNoReservation(id)
	case err != nil:
		return fmt.Errorf("read reservation: %w", err)
	case state == stateRefunded:
		return stage.Errorf(stage.CodeTimeout, "reservation %q was released before the conversion finished", id)
	}
	return nil
}

func errNoReservation(id string) error {
	return stage.Errorf(stage.CodeNotFound, "reservation %q not found", id)
}
