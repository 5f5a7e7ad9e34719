package accounts

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"

	"github.com/mdpress/mdpress/sdk/stage"
)

// sqliteBusyTimeoutMS is how long a connection waits for another process's
// write lock before giving up. Writes are tiny, so waits are short; the bound
// only matters when a process hangs while holding the lock.
const sqliteBusyTimeoutMS = 10000

// sqliteMaxConns bounds the connections, and so the concurrent readers, of
// one process.
const sqliteMaxConns = 4

// sqliteDB keeps one file that several processes (auth and meter plugins,
// the accounts CLI) open at once. WAL lets readers run beside the writer;
// BEGIN IMMEDIATE takes the write lock up front so that two writers never
// deadlock upgrading read locks; busy_timeout makes a writer wait for the
// lock instead of failing. Inside one process writers also queue on sem, so
// the busy handler's sleeps only come into play between processes.
type sqliteDB struct {
	db  *sql.DB // the pool of *sqliteConn, see sqlite_conn.go
	sem chan struct{}
}

func openSQLite(ctx context.Context, path string) (*sqliteDB, error) {
	if err := CheckSQLitePath(path); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := createPrivate(path); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	dsn := "file:" + path + "?" +
		fmt.Sprintf("_pragma=busy_timeout(%d)", sqliteBusyTimeoutMS) +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)" + // WAL + NORMAL is durable against crashes of the process, not of the OS
		"&_pragma=foreign_keys(1)"
	connector, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	db := sql.OpenDB(sqliteConnector{connector})
	db.SetMaxOpenConns(sqliteMaxConns)
	// Keep every connection open: a reopened one pays for its pragmas and
	// compiles its statements again.
	db.SetMaxIdleConns(sqliteMaxConns)
	d := &sqliteDB{db: db, sem: make(chan struct{}, 1)}
	if err := d.firstConnection(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return d, nil
}

// createPrivate creates a missing database file readable by its owner
// only. SQLite would create it with the umask's mode, 0644 as a rule, and
// it holds every hosted file's id, the capability that downloads it, of
// files sink-disk keeps at 0600; SQLite gives the -wal and -shm files the
// mode of the database file. An existing file keeps the mode its operator
// gave it.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// CheckSQLitePath refuses a SQLite DSN that is not a plain file path,
// which Open would refuse: callers that look at the file before opening
// it (is it there yet?) check it first, or they speak of a file that the
// DSN never named.
func CheckSQLitePath(path string) error {
	if path == "" {
		return stage.Errorf(stage.CodeInvalid, "sqlite: empty database path")
	}
	if strings.Contains(path, "://") {
		// MDPRESS_ACCOUNTS_DSN set without MDPRESS_ACCOUNTS_DRIVER: taken as
		// a path, it made an empty accounts file of its own under
		// ./postgres:/, where every key was unknown. The password is not
		// for the terminal or the log.
		shown := path
		if u, err := url.Parse(path); err == nil {
			shown = u.Redacted()
		}
		return stage.Errorf(stage.CodeInvalid, "sqlite: %q is a URL, not a file path; a PostgreSQL DSN needs accounts.driver: postgres", shown)
	}
	if strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:") || path == ":memory:" {
		return stage.Errorf(stage.CodeInvalid, "sqlite: %q is not a plain file path", path)
	}
	return nil
}

// sqliteBusy is SQLITE_BUSY, the primary result code of a lock wait that
// failed.
const sqliteBusy = 5

// firstConnection opens a connection, retrying while the file is busy. Two
// processes opening a new file at once (the auth and meter plugins of a
// fresh host) race to switch it to WAL, and the loser's journal_mode pragma
// fails with SQLITE_BUSY at once, without the busy handler. The switch is
// made once per file, so the next attempt finds WAL and goes through; the
// retries are bounded by the busy timeout, like any other lock wait.
func (d *sqliteDB) firstConnection(ctx context.Context) error {
	deadline := time.Now().Add(sqliteBusyTimeoutMS * time.Millisecond)
	for wait := 2 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := d.ping(ctx)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqliteBusy || time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return err
		}
	}
}

// lend runs fn on a connection of the pool. An error that wraps
// driver.ErrBadConn makes database/sql drop the connection.
func (d *sqliteDB) lend(ctx context.Context, fn func(c *sqliteConn) error) error {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error { return fn(dc.(*sqliteConn)) })
}

func (d *sqliteDB) write(ctx context.Context, fn func(q querier) error) error {
	return d.transact(ctx, true, fn)
}

// transact runs fn in a write transaction; keep says whether its
// statements stay compiled for reuse.
func (d *sqliteDB) transact(ctx context.Context, keep bool, fn func(q querier) error) error {
	select {
	case d.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-d.sem }()
	return d.lend(ctx, func(c *sqliteConn) error {
		// ctx reaches the driver here alone: this is where another
		// process's write lock is waited for.
		if _, err := c.exec(ctx, ctx, true, "BEGIN IMMEDIATE", nil); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		err := fn(sqliteQuerier{c: c, keep: keep})
		if err == nil {
			// Once fn has succeeded the commit goes ahead even if ctx ends
			// now: the transaction is complete.
			if _, err = c.exec(context.Background(), context.Background(), true, "COMMIT", nil); err == nil {
				return nil
			}
			err = fmt.Errorf("commit: %w", err)
		}
		if _, rerr := c.exec(context.Background(), context.Background(), true, "ROLLBACK", nil); rerr != nil {
			// The transaction may still be open: the connection must go.
			return errors.Join(err, fmt.Errorf("rollback: %w", rerr), driver.ErrBadConn)
		}
		return err
	})
}

func (d *sqliteDB) writeOne(ctx context.Context, query string, args ...any) (n int64, err error) {
	select {
	case d.sem <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { <-d.sem }()
	err = d.lend(ctx, func(c *sqliteConn) error {
		// ctx reaches the driver: the statement waits for the write lock.
		n, err = c.exec(ctx, ctx, true, query, args)
		return err
	})
	return n, err
}

func (*sqliteDB) forUpdate() string { return "" }

// migrate runs inside one write transaction: the write lock makes a second
// process opening the same file wait, then find the migrations applied.
// Its statements run once, so they are not kept compiled.
func (d *sqliteDB) migrate(ctx context.Context, ms []migration) error {
	return d.transact(ctx, false, func(q querier) error {
		return applyMigrations(ctx, q, ms, "INTEGER PRIMARY KEY AUTOINCREMENT")
	})
}

func (d *sqliteDB) ping(ctx context.Context) error {
	var one int
	return d.queryRow(ctx, "SELECT 1").Scan(&one)
}

func (d *sqliteDB) close() error { return d.db.Close() }

// exec, query and queryRow run outside a transaction, each on a connection
// lent for the one statement.

func (d *sqliteDB) exec(ctx context.Context, query string, args ...any) (n int64, err error) {
	err = d.lend(ctx, func(c *sqliteConn) error {
		n, err = sqliteQuerier{c: c, keep: true}.exec(ctx, query, args...)
		return err
	})
	return n, err
}

func (d *sqliteDB) execLater(ctx context.Context, what, query string, args ...any) error {
	if _, err := d.exec(ctx, query, args...); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func (d *sqliteDB) query(ctx context.Context, query string, args ...any) (rs rows, err error) {
	err = d.lend(ctx, func(c *sqliteConn) error {
		rs, err = sqliteQuerier{c: c, keep: true}.query(ctx, query, args...)
		return err
	})
	return rs, err
}

func (d *sqliteDB) queryRow(ctx context.Context, query string, args ...any) row {
	var r row
	err := d.lend(ctx, func(c *sqliteConn) error {
		r = sqliteQuerier{c: c, keep: true}.queryRow(ctx, query, args...)
		return nil
	})
	if err != nil {
		return rowFunc(func(...any) error { return err })
	}
	return r
}
