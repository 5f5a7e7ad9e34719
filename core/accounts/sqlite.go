package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/mdpress/mdpress/sdk/stage"
)

// sqliteBusyTimeoutMS is how long a connection waits for another process's
// write lock before giving up. Writes are tiny, so waits are short; the bound
// only matters when a process hangs while holding the lock.
const sqliteBusyTimeoutMS = 10000

// sqliteDB keeps one file that several processes (auth and meter plugins,
// the accounts CLI) open at once. WAL lets readers run beside the writer;
// BEGIN IMMEDIATE takes the write lock up front so that two writers never
// deadlock upgrading read locks; busy_timeout makes a writer wait for the
// lock instead of failing. Inside one process writers also queue on sem, so
// the busy handler's sleeps only come into play between processes.
type sqliteDB struct {
	sqlQuerier
	sem chan struct{}
}

func openSQLite(ctx context.Context, path string) (*sqliteDB, error) {
	if path == "" {
		return nil, stage.Errorf(stage.CodeInvalid, "sqlite: empty database path")
	}
	if strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:") || path == ":memory:" {
		return nil, stage.Errorf(stage.CodeInvalid, "sqlite: %q is not a plain file path", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	dsn := "file:" + path + "?_txlock=immediate" +
		fmt.Sprintf("&_pragma=busy_timeout(%d)", sqliteBusyTimeoutMS) +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)" + // WAL + NORMAL is durable against crashes of the process, not of the OS
		"&_pragma=foreign_keys(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	db.SetMaxOpenConns(4)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return &sqliteDB{sqlQuerier: sqlQuerier{db}, sem: make(chan struct{}, 1)}, nil
}

func (d *sqliteDB) write(ctx context.Context, fn func(q querier) error) error {
	select {
	case d.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-d.sem }()
	db := d.sqlQuerier.q.(*sql.DB)
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE, from _txlock
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(sqlQuerier{tx}); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (*sqliteDB) forUpdate() string { return "" }

// migrate runs inside one write transaction: the write lock makes a second
// process opening the same file wait, then find the migrations applied.
func (d *sqliteDB) migrate(ctx context.Context, ms []migration) error {
	return d.write(ctx, func(q querier) error {
		return applyMigrations(ctx, q, ms, "INTEGER PRIMARY KEY AUTOINCREMENT")
	})
}

func (d *sqliteDB) ping(ctx context.Context) error {
	return d.sqlQuerier.q.(*sql.DB).PingContext(ctx)
}

func (d *sqliteDB) close() error { return d.sqlQuerier.q.(*sql.DB).Close() }

// sqlQuerier adapts database/sql (a *sql.DB or a *sql.Tx).
type sqlQuerier struct {
	q interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	}
}

func (s sqlQuerier) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (s sqlQuerier) query(ctx context.Context, query string, args ...any) (rows, error) {
	rs, err := s.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rs}, nil
}

func (s sqlQuerier) queryRow(ctx context.Context, query string, args ...any) row {
	r := s.q.QueryRowContext(ctx, query, args...)
	return rowFunc(func(dest ...any) error {
		err := r.Scan(dest...)
		if errors.Is(err, sql.ErrNoRows) {
			return errNoRows
		}
		return err
	})
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }
