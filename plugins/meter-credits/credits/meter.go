// Package credits is the meter stage over the account store (core/accounts):
// a conversion's credits are reserved before rendering, committed once the
// PDF is delivered and refunded on any failure. A background sweep refunds
// reservations that a crashed host never finished.
package credits

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdpress/mdpress/core/accounts"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Version is reported in the plugin's Info.
const Version = "0.1.0"

// sweepTimeout bounds one ReleaseExpired call so a stuck database cannot
// pile sweeps up.
const sweepTimeout = 30 * time.Second

// Meter is the meter stage.
type Meter struct {
	log  *slog.Logger
	opts []accounts.Option

	mu  sync.RWMutex // guards cur against Configure and Close
	cur *state
	// held is the configured reservation TTL, which Reserve reports.
	held atomic.Int64
}

// state is what one successful Configure set up.
type state struct {
	cfg   Config
	store accounts.Store
	stop  context.CancelFunc
	done  chan struct{} // closed when the sweeper has returned
}

// New returns an unconfigured Meter; opts reach accounts.Open (the
// reservation TTL comes from the config). It does no I/O.
func New(log *slog.Logger, opts ...accounts.Option) *Meter {
	return &Meter{log: log, opts: opts}
}

// Configure opens the account store and starts the sweeper. A second
// Configure replaces the first.
func (m *Meter) Configure(ctx context.Context, req *stage.ConfigureRequest) (*stage.ConfigureResponse, error) {
	cfg, err := parseConfig(req.Config)
	if err != nil {
		return nil, err
	}
	opts := append(append([]accounts.Option(nil), m.opts...), accounts.WithReservationTTL(cfg.ReservationTTL))
	st, err := accounts.OpenConfigured(ctx, req, opts...)
	if err != nil {
		// The store's own errors name what is wrong and where, and only a
		// message reaches the host.
		var se *stage.Error
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, stage.Wrap(stage.CodeUnavailable, err, "meter-credits: cannot open the account store")
	}
	sweepCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s := &state{cfg: cfg, store: st, stop: stop, done: make(chan struct{})}
	go m.sweep(sweepCtx, s)

	m.mu.Lock()
	old := m.cur
	m.cur = s
	m.held.Store(int64(cfg.ReservationTTL))
	m.mu.Unlock()
	old.shutdown()
	m.log.Info("meter-credits configured", "reservationTTL", cfg.ReservationTTL.String(),
		"releaseInterval", cfg.ReleaseInterval.String())
	return &stage.ConfigureResponse{Info: stage.Info{Name: "meter-credits", Version: Version}}, nil
}

// sweep refunds expired reservations at once (a restart after a crash
// frees what the crash left) and then every ReleaseInterval, and deletes
// the finished ones no replay can ask for.
func (m *Meter) sweep(ctx context.Context, s *state) {
	defer close(s.done)
	tick := time.NewTicker(s.cfg.ReleaseInterval)
	defer tick.Stop()
	for {
		sctx, cancel := context.WithTimeout(ctx, sweepTimeout)
		n, err := s.store.ReleaseExpired(sctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			m.log.Error("release expired reservations", "err", err)
		case n > 0:
			m.log.Info("refunded expired reservations", "count", n, "reservationTTL", s.cfg.ReservationTTL.String())
		}
		// Finished reservations are kept for replays, a day, not forever:
		// each conversion left a row, and with it its hosted file's id.
		sctx, cancel = context.WithTimeout(ctx, sweepTimeout)
		n, err = s.store.PruneFinished(sctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			m.log.Error("prune finished reservations", "err", err, "pruned", n)
		case n > 0:
			m.log.Info("pruned finished reservations past the replay window", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// shutdown stops the sweeper, waits for it and closes the store. It is a
// no-op on nil.
func (s *state) shutdown() error {
	if s == nil {
		return nil
	}
	s.stop()
	<-s.done
	return s.store.Close()
}

// Reserve takes the request's credits, or replays an idempotent retry.
func (m *Meter) Reserve(ctx context.Context, req *stage.ReserveRequest) (*stage.ReserveResponse, error) {
	var resp *stage.ReserveResponse
	err := m.with(func(st accounts.Store) error {
		res, replay, err := st.Reserve(ctx, accounts.ReserveParams{
			UserID: req.UserID, Credits: req.Credits,
			IdempotencyKey: req.IdempotencyKey, RequestHash: req.RequestHash,
		})
		if err != nil {
			return err
		}
		resp = &stage.ReserveResponse{ReservationID: res.ID, Held: time.Duration(m.held.Load())}
		if replay != nil {
			resp.Replay = &stage.Replay{Result: replay.Result}
		}
		return nil
	})
	return resp, m.check(ctx, "reserve", err)
}

// Commit makes a reservation final. Committing twice changes nothing.
func (m *Meter) Commit(ctx context.Context, req *stage.CommitRequest) (*stage.CommitResponse, error) {
	err := m.with(func(st accounts.Store) error { return st.Commit(ctx, req.ReservationID, req.Result) })
	if err = m.check(ctx, "commit", err); err != nil {
		return nil, err
	}
	return &stage.CommitResponse{}, nil
}

// Refund gives a reservation's credits back. Refunding twice, or after a
// commit, changes nothing.
func (m *Meter) Refund(ctx context.Context, req *stage.RefundRequest) (*stage.RefundResponse, error) {
	err := m.with(func(st accounts.Store) error { return st.Refund(ctx, req.ReservationID, req.Reason) })
	if err = m.check(ctx, "refund", err); err != nil {
		return nil, err
	}
	return &stage.RefundResponse{}, nil
}

// Account reports a balance, after any monthly reset that is due.
func (m *Meter) Account(ctx context.Context, req *stage.AccountRequest) (*stage.AccountResponse, error) {
	var resp *stage.AccountResponse
	err := m.with(func(st accounts.Store) error {
		a, err := st.Account(ctx, req.UserID)
		if err != nil {
			return err
		}
		plan, err := st.Plan(a.Plan)
		if err != nil {
			// Still answer: the balance is real even if the operator dropped
			// the plan from the config.
			m.log.WarnContext(ctx, "account on a plan that is not configured", "userId", a.ID, "plan", a.Plan)
			plan = stage.Plan{Name: a.Plan}
		}
		resp = &stage.AccountResponse{UserID: a.ID, Plan: plan, CurrentCredits: a.Credits, LastReset: a.LastReset}
		return nil
	})
	return resp, m.check(ctx, "account", err)
}

// with runs fn on the configured store.
func (m *Meter) with(fn func(st accounts.Store) error) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.cur == nil {
		return stage.Errorf(stage.CodeUnavailable, "meter-credits is not configured")
	}
	return fn(m.cur.store)
}

// check logs internal failures and reports them as an unavailable store;
// client errors (out of credits, unknown reservation, ...) pass unchanged.
func (m *Meter) check(ctx context.Context, op string, err error) error {
	switch {
	case err == nil || stage.CodeOf(err) != stage.CodeInternal:
		return err
	case errors.Is(err, context.DeadlineExceeded):
		return stage.Wrap(stage.CodeTimeout, err, "the account store did not answer in time")
	case errors.Is(err, context.Canceled):
		return err
	}
	m.log.ErrorContext(ctx, op, "err", err)
	return stage.Wrap(stage.CodeUnavailable, err, "the account store is unavailable")
}

// Health checks that the account store answers. A store that does not
// answer in time is unavailable too, not a timeout of the meter: the host
// waits for a dependency that is down, and relaunches a plugin that hangs.
func (m *Meter) Health(ctx context.Context) error {
	err := m.with(func(st accounts.Store) error { return st.Ping(ctx) })
	if err == nil || stage.CodeOf(err) != stage.CodeInternal && stage.CodeOf(err) != stage.CodeTimeout {
		return err
	}
	return stage.Wrap(stage.CodeUnavailable, err, "the account store is unavailable")
}

// Close stops the sweeper and closes the store. It is safe twice and before
// Configure.
func (m *Meter) Close() error {
	m.mu.Lock()
	s := m.cur
	m.cur = nil
	m.mu.Unlock()
	return s.shutdown()
}

var _ stage.Meter = (*Meter)(nil)
var _ stage.Plugin = (*Meter)(nil)
