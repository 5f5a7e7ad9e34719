package accounts

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
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
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return &pgDB{pgQuerier: pgQuerier{pool}, pool: pool}, nil
}

func (d *pgDB) write(ctx context.Context, fn func(q querier) error) error {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	tx := &pgTx{conn: conn.Conn()}
	if err := fn(tx); err != nil {
		tx.rollback(ctx)
		return err
	}
	if err := tx.commit(ctx); err != nil {
		tx.rollback(ctx)
		return err
	}
	return nil
}

func (d *pgDB) writeOne(ctx context.Context, sql string, args ...any) (int64, error) {
	return d.exec(ctx, sql, args...)
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
