package api

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/mdpress/mdpress/core/pipeline"
	"github.com/mdpress/mdpress/sdk/stage"
)

// recharges retries in the background the charges of delivered PDFs whose
// commit failed. An account database restarting or failing over for a
// moment failed the commit, and the reservation stayed held until the
// meter's sweeper refunded it, the PDF given away: half the PDFs delivered
// around a half-second PostgreSQL crash went free. Each retry finds the
// meter's live client (see liveMeter) and stops well before the meter may
// release the reservation (see pipeline.ErrTooLate).
type recharges struct {
	log *slog.Logger
	// max retries pending at once: an outage must not pile up goroutines
	// without bound. Past it a failed charge is given up at once.
	max int
	// first is the wait before the first retry; it doubles up to maxWait,
	// and retries end after giveUp.
	first, maxWait, giveUp time.Duration

	abandon context.Context // done at shutdown, once the drain window is over
	stop    context.CancelFunc

	mu      sync.Mutex
	pending int
	changed chan struct{} // closed and replaced when pending changes
}

// Default retry bounds: about a thousand PDFs, two core's worth for a
// minute, each holding only its reservation; three minutes, well inside
// meter-credits' default reservationTTL of ten.
const (
	defaultMaxRecharges    = 1024
	defaultRechargeFirst   = 500 * time.Millisecond
	defaultRechargeMaxWait = 30 * time.Second
	defaultRechargeGiveUp  = 3 * time.Minute
)

func newRecharges(log *slog.Logger) *recharges {
	ctx, stop := context.WithCancel(context.Background())
	return &recharges{log: log, max: defaultMaxRecharges, first: defaultRechargeFirst,
		maxWait: defaultRechargeMaxWait, giveUp: defaultRechargeGiveUp,
		abandon: ctx, stop: stop, changed: make(chan struct{})}
}

// retry takes over a delivered PDF's charge that failed with err; charged
// runs once it is made. It reports false when it gave the charge up at
// once: an error a retry would meet again, too many retries pending, or a
// shutdown under way.
func (rc *recharges) retry(reqID string, charge func(context.Context) error, err error, charged func()) bool {
	if charge == nil || permanent(err) {
		rc.givenUp(reqID, 0, err)
		return false
	}
	rc.mu.Lock()
	if rc.pending >= rc.max || rc.abandon.Err() != nil {
		rc.mu.Unlock()
		rc.givenUp(reqID, 0, errors.New("too many charges being retried, or shutting down"))
		return false
	}
	rc.setPending(+1)
	rc.mu.Unlock()
	rc.log.Warn("charge after the answer failed: retrying", "requestId", reqID, "err", err)
	go func() {
		defer func() {
			rc.mu.Lock()
			rc.setPending(-1)
			rc.mu.Unlock()
		}()
		rc.loop(reqID, charge, charged)
	}()
	return true
}

func (rc *recharges) loop(reqID string, charge func(context.Context) error, charged func()) {
	end := time.Now().Add(rc.giveUp)
	wait := rc.first
	for attempt := 1; ; attempt++ {
		t := time.NewTimer(wait)
		select {
		case <-rc.abandon.Done():
			t.Stop()
			return // counted by drain
		case <-t.C:
		}
		err := charge(rc.abandon)
		switch {
		case err == nil:
			rc.log.Info("charge after the answer made on retry", "requestId", reqID, "attempts", attempt)
			charged()
			return
		case rc.abandon.Err() != nil:
			return
		case permanent(err), errors.Is(err, pipeline.ErrTooLate):
			rc.givenUp(reqID, attempt, err)
			return
		}
		wait = min(2*wait, rc.maxWait)
		if time.Now().Add(wait).After(end) {
			rc.givenUp(reqID, attempt, err)
			return
		}
	}
}

// givenUp logs a charge that will not be made: the PDF was delivered free.
func (rc *recharges) givenUp(reqID string, attempts int, err error) {
	rc.log.Error("charge after the answer given up: the PDF goes free", "requestId", reqID, "retries", attempts, "err", err)
}

// setPending changes the count; rc.mu is held.
func (rc *recharges) setPending(delta int) {
	rc.pending += delta
	close(rc.changed)
	rc.changed = make(chan struct{})
}

// drain waits for the pending retries until ctx ends, then abandons those
// left and returns how many: their reservations stay held until the
// meter's sweeper refunds them. New failures are given up from then on.
func (rc *recharges) drain(ctx context.Context) int {
	for {
		rc.mu.Lock()
		n, changed := rc.pending, rc.changed
		if n == 0 || ctx.Err() != nil {
			rc.stop()
			rc.mu.Unlock()
			return n
		}
		rc.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
		}
	}
}

// permanent reports whether a charge failed for a reason a retry would
// meet again: the reservation unknown, or the request refused. Whatever
// else failed (the store or the meter down or slow) may pass.
func permanent(err error) bool {
	switch stage.CodeOf(err) {
	case stage.CodeInvalid, stage.CodeUnauthenticated, stage.CodeForbidden, stage.CodeNotFound, stage.CodeGone, stage.CodeTooLarge:
		return true
	}
	return false
}
