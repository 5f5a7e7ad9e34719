package accounts

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// pgTx is a transaction that spends as few round trips as it can, since a
// round trip costs the store more than the statements it carries: BEGIN goes
// out in one pipeline with the first statement, and statements queued with
// execLater go out with the next statement or with COMMIT. Reserve is then
// two round trips (BEGIN + UPDATE ... RETURNING, then both INSERTs +
// COMMIT). PostgreSQL skips the rest of a pipeline after an error, so a
// failed queued statement is never followed by a COMMIT.
type pgTx struct {
	conn       *pgx.Conn
	begun      bool // BEGIN has been sent
	committing bool // COMMIT is being sent: the outcome is the server's to tell
	pending    []pgQueued
}

type pgQueued struct {
	what string // names the statement in its error
	sql  string
	args []any
}

// send pipelines BEGIN (the first time), the queued statements and then
// sql, and reads the results before sql's, which it leaves to the caller,
// who must close br.
func (t *pgTx) send(ctx context.Context, sql string, args []any) (br pgx.BatchResults, err error) {
	b := &pgx.Batch{}
	begin := !t.begun
	if begin {
		b.Queue("BEGIN")
	}
	pending := t.pending
	for _, p := range pending {
		b.Queue(p.sql, p.args...)
	}
	t.begun, t.pending = true, nil
	b.Queue(sql, args...)
	br = t.conn.SendBatch(ctx, b)
	if begin {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return nil, fmt.Errorf("begin: %w", err)
		}
	}
	for _, p := range pending {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return nil, fmt.Errorf("%s: %w", p.what, err)
		}
	}
	return br, nil
}

func (t *pgTx) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	br, err := t.send(ctx, sql, args)
	if err != nil {
		return 0, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag.RowsAffected(), err
}

func (t *pgTx) execLater(_ context.Context, what, sql string, args ...any) error {
	t.pending = append(t.pending, pgQueued{what, sql, args})
	return nil
}

func (t *pgTx) query(ctx context.Context, sql string, args ...any) (rows, error) {
	br, err := t.send(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	rs, err := br.Query()
	if err != nil {
		br.Close()
		return nil, err
	}
	return pgBatchRows{rs, br}, nil
}

// queryRow sends nothing until Scan, like pgx's own QueryRow.
func (t *pgTx) queryRow(ctx context.Context, sql string, args ...any) row {
	return rowFunc(func(dest ...any) error {
		br, err := t.send(ctx, sql, args)
		if err != nil {
			return err
		}
		err = br.QueryRow().Scan(dest...)
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return errNoRows
		}
		return err
	})
}

// commit sends what is still queued with COMMIT. A transaction that sent
// nothing has nothing to commit.
func (t *pgTx) commit(ctx context.Context) error {
	if !t.begun && len(t.pending) == 0 {
		return nil
	}
	t.committing = true
	br, err := t.send(ctx, "COMMIT", nil)
	if err != nil {
		return err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return fmt.Errorf("commit: %w", err)
	case tag.String() == "ROLLBACK": // the transaction had failed
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// rollback ends a transaction that fn gave up on. When it cannot, the
// connection is left inside the transaction, and the pool closes a
// connection released in that state rather than reuse it.
func (t *pgTx) rollback(ctx context.Context) {
	t.pending = nil
	if t.begun && t.conn.PgConn().TxStatus() != 'I' {
		t.conn.Exec(ctx, "ROLLBACK")
	}
}

// pgBatchRows closes the pipeline with the rows read from it.
type pgBatchRows struct {
	pgx.Rows
	br pgx.BatchResults
}

func (r pgBatchRows) Close() {
	r.Rows.Close()
	r.br.Close()
}
