package accounts

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

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
// missing) or "postgres" (dsn is a libpq URL or key=value string; pgxpool's
// pool_max_conns and friends are honoured). A bad argument is a
// CodeInvalid *stage.Error; a PostgreSQL that cannot be reached, or a
// failed migration, a CodeUnavailable one naming the database; a SQLite
// file that cannot be opened is any other error.
func Open(ctx context.Context, driver, dsn string, plans []stage.Plan, opts ...Option) (Store, error) {
	o := options{now: time.Now, reservationTTL: DefaultReservationTTL}
	for _, opt := range opts {
		opt(&o)
	}
	if o.reservationTTL <= 0 {
		return nil, stage.Errorf(stage.CodeInvalid, "reservation TTL must be positive, got %v", o.reservationTTL)
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
		if err != nil && stage.CodeOf(err) != stage.CodeInvalid {
			return nil, unreachable(dsn, err)
		}
	default:
		return nil, stage.Errorf(stage.CodeInvalid, "unknown accounts driver %q (want %q or %q)", driver, DriverSQLite, DriverPostgres)
	}
	if err != nil {
		return nil, err
	}
	if err := db.migrate(ctx, migrations); err != nil {
		db.close()
		return nil, stage.Errorf(stage.CodeUnavailable, "migrate the accounts at %s: %v", Where(driver, dsn), err)
	}
	return &store{db: db, plans: byName, opts: o}, nil
}

// unreachable says which database would not answer, why, and the setting
// that names it. Only the message crosses from the auth and meter plugins
// to the line mdpress serve exits with, so the cause goes in it (and is
// not wrapped too, which would print it twice); pgx's connection errors
// name the user, database and address, never the password.
func unreachable(dsn string, err error) error {
	return stage.Errorf(stage.CodeUnavailable, "cannot open the accounts at %s: %v; check accounts.dsn (MDPRESS_ACCOUNTS_DSN) and that the server is up",
		Where(DriverPostgres, dsn), err)
}

func planIndex(plans []stage.Plan) (map[string]stage.Plan, error) {
	byName := make(map[string]stage.Plan, len(plans))
	for _, p := range plans {
		switch {
		case p.Name == "":
			return nil, stage.Errorf(stage.CodeInvalid, "plan with an empty name")
		case p.MonthlyCredits < 0:
			return nil, stage.Errorf(stage.CodeInvalid, "plan %q: negative monthly credits", p.Name)
		}
		if _, dup := byName[p.Name]; dup {
			return nil, stage.Errorf(stage.CodeInvalid, "plan %q defined twice", p.Name)
		}
		byName[p.Name] = p
	}
	return byName, nil
}

// OpenConfigured opens the store that a plugin's ConfigureRequest names,
// with the operator's plans. An empty driver means SQLite, and SQLite with
// an empty DSN means <DataDir>/mdpress.db, the embedded default.
func OpenConfigured(ctx context.Context, req *stage.ConfigureRequest, opts ...Option) (Store, error) {
	driver, dsn := req.Accounts.Driver, req.Accounts.DSN
	if driver == "" {
		driver = DriverSQLite
	}
	if driver == DriverSQLite && dsn == "" {
		if req.DataDir == "" {
			return nil, stage.Errorf(stage.CodeInvalid, "accounts: sqlite needs a DSN or a data directory")
		}
		dsn = filepath.Join(req.DataDir, "mdpress.db")
	}
	return Open(ctx, driver, dsn, req.Plans, opts...)
}

// Where names where a store keeps its accounts, for the operator's log:
// the SQLite file as an absolute path, or PostgreSQL's user, host, port
// and database, never the password or other parameters of the DSN.
func Where(driver, dsn string) string {
	if driver != DriverPostgres {
		if abs, err := filepath.Abs(dsn); err == nil {
			return abs
		}
		return dsn
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "postgres (DSN not understood)"
	}
	host := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if strings.HasPrefix(cfg.Host, "/") {
		host = cfg.Host + ":" + strconv.Itoa(int(cfg.Port)) // a socket's directory
	}
	return fmt.Sprintf("postgres %s@%s/%s", cfg.User, host, cfg.Database)
}
