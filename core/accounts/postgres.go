package accounts

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mdpress/mdpress/sdk/stage"
)

// migrationLockID names the advisory lock that keeps two hosts starting at
// once from migrating the same database together.
const migrationLockID = 0x6d64707265737301 // "mdpress" + 1

// pgDB is shared by every host replica. Transactions (pgtx.go) run at READ
// COMMITTED; the store locks the account row (with the UPDATE that deducts,
// or SELECT ... FOR UPDATE) before it changes a balance, which serialises
// writers of one account across hosts.
type pgDB struct {
	pgQuerier
	pool *pgxpool.Pool
}

func openPostgres(ctx context.Context, dsn string) (*pgDB, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, dsnError(err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return &pgDB{pgQuerier: pgQuerier{pool}, pool: pool}, nil
}

// dsnError reports a DSN that pgx cannot read without quoting the DSN:
// pgx masks the password in the DSN it quotes only where it recognizes
// one, and a keyword/value DSN with spaces around "=" (password = s3cret,
// which libpq takes) went whole into the plugins' log and the command's
// error. The operator has the DSN; what pgx found wrong follows the quote.
func dsnError(err error) error {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return err
	}
	quote := (&pgconn.ParseConfigError{ConnString: pe.ConnString}).Error()
	reason, ok := strings.CutPrefix(pe.Error(), quote)
	if !ok || reason == "" {
		reason = "not understood"
	}
	reason = dsnQuoted.ReplaceAllStringFunc(reason, func(q string) string {
		switch {
		case strings.HasPrefix(q, "in URI"):
			return `in URI query parameter: "...")`
		case q == `"="` || q == `":"` || q == `"/"` || q == `"]"`:
			return q // the syntax pgx expected
		}
		return `"..."`
	})
	return stage.Errorf(stage.CodeInvalid, "accounts.dsn (MDPRESS_ACCOUNTS_DSN) is not a PostgreSQL DSN: %s", reason)
}

// dsnQuoted is a piece of the DSN that pgx's reason quotes: the word it
// stopped at, which it could not know for part of a password
// ("password=correct hunter2 dbname=x" stopped after "hunter2", a password
// with "&" in a URL at its next word). A %q quote may hold escaped quotes;
// a URL's query parameter is quoted raw, to the end of the reason.
var dsnQuoted = regexp.MustCompile(`in URI query parameter: ".*"\)$|"(?:[^"\\]|\\.)*"`)

func (d *pgDB) write(ctx context.Context, fn func(q querier) error) error {
	for attempt := 1; ; attempt++ {
		again, err := d.writeOnce(ctx, fn)
		if !again || attempt == connAttempts {
			return err
		}
		d.pool.Reset()
	}
}

// writeOnce runs fn in a transaction on one connection. It reports again
// when the connection was lost before COMMIT went out: the server then
// rolled the transaction back, so running it whole once more on another
// connection is safe. Once COMMIT has gone out the outcome is unknown, and
// the error stands.
func (d *pgDB) writeOnce(ctx context.Context, fn func(q querier) error) (again bool, err error) {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Release()
	tx := &pgTx{conn: conn.Conn()}
	if err = fn(tx); err == nil {
		err = tx.commit(ctx)
	}
	if err != nil {
		tx.rollback(ctx)
		return !tx.committing && lost(ctx, conn.Conn()), err
	}
	return false, nil
}

// writeOne's statement is Commit's, whose guard on the reservation's state
// makes a second run change nothing: it may run again on another
// connection even when the first was lost after sending it.
func (d *pgDB) writeOne(ctx context.Context, sql string, args ...any) (int64, error) {
	var n int64
	err := d.retrying(ctx, func(c *pgx.Conn) error {
		tag, err := c.Exec(ctx, sql, args...)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// queryRow reads on the pool, as pgQuerier's does, with a second try when
// the connection was lost (see retrying): the key check and the balance
// read are on every request's path.
func (d *pgDB) queryRow(ctx context.Context, sql string, args ...any) row {
	return rowFunc(func(dest ...any) error {
		err := d.retrying(ctx, func(c *pgx.Conn) error { return c.QueryRow(ctx, sql, args...).Scan(dest...) })
		if errors.Is(err, pgx.ErrNoRows) {
			return errNoRows
		}
		return err
	})
}

// connAttempts bounds the connections one statement or transaction is
// tried on (see retrying). The pool is emptied before the second: what
// ended one session has most often ended all of them, and the second try
// would otherwise as likely find another connection that is gone.
const connAttempts = 2

// retrying runs fn, which must be safe to run twice, on a pooled
// connection, and once more on another when the first was lost under it.
// After PostgreSQL restarts, or an administrator, a pooler or a failover
// ends the sessions, the pool still holds the connections used within the
// last second (it pings only those idle for longer), and the first
// statement on each fails although the server is back: without a second
// try that was a 500 to a client, or a charge given up after its PDF was
// delivered.
func (d *pgDB) retrying(ctx context.Context, fn func(c *pgx.Conn) error) error {
	for attempt := 1; ; attempt++ {
		conn, err := d.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		err = fn(conn.Conn())
		again := err != nil && lost(ctx, conn.Conn())
		conn.Release()
		if !again || attempt == connAttempts {
			return err
		}
		d.pool.Reset()
	}
}

// lost reports whether c was closed by the server or the network rather
// than by ctx ending, which also closes a connection in use.
func lost(ctx context.Context, c *pgx.Conn) bool {
	return c.IsClosed() && ctx.Err() == nil
}

func (*pgDB) forUpdate() string { return " FOR UPDATE" }

func (d *pgDB) migrate(ctx context.Context, ms []migration) error {
	return d.write(ctx, func(q querier) error {
		if _, err := q.exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLockID)); err != nil {
			return err
		}
		return applyMigrations(ctx, q, ms, "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
	})
}

func (d *pgDB) ping(ctx context.Context) error { return d.pool.Ping(ctx) }

func (d *pgDB) close() error { d.pool.Close(); return nil }

// pgQuerier runs statements on the pool, outside a transaction.
type pgQuerier struct {
	q interface {
		Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
		Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	}
}

func (p pgQuerier) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := p.q.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

// execLater has nothing to wait for outside a transaction.
func (p pgQuerier) execLater(ctx context.Context, what, sql string, args ...any) error {
	if _, err := p.exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func (p pgQuerier) query(ctx context.Context, sql string, args ...any) (rows, error) {
	return p.q.Query(ctx, sql, args...)
}

func (p pgQuerier) queryRow(ctx context.Context, sql string, args ...any) row {
	r := p.q.QueryRow(ctx, sql, args...)
	return rowFunc(func(dest ...any) error {
		err := r.Scan(dest...)
		if errors.Is(err, pgx.ErrNoRows) {
			return errNoRows
		}
		return err
	})
}
