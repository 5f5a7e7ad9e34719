package accounts

import (
	"context"
	"fmt"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Drivers accepted by Open.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// DefaultReservationTTL is how long a reservation may stay open before
// ReleaseExpired refunds it. It is far longer than any render.
const DefaultReservationTTL = 10 * time.Minute

// idempotencyWindow is how long a committed result can be replayed.
const idempotencyWindow = 24 * time.Hour

// Option adjusts a Store.
type Option func(*options)

type options struct {
	now            func() time.Time
	reservationTTL time.Duration
}

// WithClock replaces time.Now; tests use it to cross month boundaries.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithReservationTTL sets how long a reservation may stay open before
// ReleaseExpired refunds it.
func WithReservationTTL(d time.Duration) Option {
	return func(o *options) { o.reservationTTL = d }
}

// Open connects to the store and applies any pending schema migrations.
// driver is "sqlite" (dsn is a file path, created with its directory when
// missing) or "postgres" (dsn is a libpq URL or key=value string).
func Open(ctx context.Context, driver, dsn string, plans []stage.Plan, opts ...Option) (Store, error) {
	o := options{now: time.Now, reservationTTL: DefaultReservationTTL}
	for _, opt := range opts {
		opt(&o)
	}
	if o.reservationTTL <= 0 {
		return nil, fmt.Errorf("reservation TTL must be positive, got %v", o.reservationTTL)
	}
	byName, err := planIndex(plans)
	if err != nil {
		return nil, err
	}
	var db engine
	switch driver {
	case DriverSQLite:
		db, err = openSQLite(ctx, dsn)
	case DriverPostgres:
		db, err = openPostgres(ctx, dsn)
	default:
		return nil, fmt.Errorf("unknown accounts driver %q (want %q or %q)", driver, DriverSQLite, DriverPostgres)
	}
	if err != nil {
		return nil, err
	}
	if err := db.migrate(ctx, migrations); err != nil {
		db.close()
		return nil, fmt.Errorf("migrate %s: %w", driver, err)
	}
	return &store{db: db, plans: byName, opts: o}, nil
}

func planIndex(plans []stage.Plan) (map[string]stage.Plan, error) {
	byName := make(map[string]stage.Plan, len(plans))
	for _, p := range plans {
		switch {
		case p.Name == "":
			return nil, fmt.Errorf("plan with an empty name")
		case p.MonthlyCredits < 0:
			return nil, fmt.Errorf("plan %q: negative monthly credits", p.Name)
		}
		if _, dup := byName[p.Name]; dup {
			return nil, fmt.Errorf("plan %q defined twice", p.Name)
		}
		byName[p.Name] = p
	}
	return byName, nil
}
