package accounts

import (
	"context"
	"errors"
)

// engine is what the store needs from a database. The SQL the store sends is
// shared by SQLite and PostgreSQL ($n placeholders, BIGINT microsecond
// timestamps), so an engine only adapts the driver and its locking.
type engine interface {
	querier
	// write runs fn in one transaction. Rows read with forUpdate() inside it
	// stay locked until it ends; SQLite goes further and holds the database
	// write lock from the start (BEGIN IMMEDIATE).
	write(ctx context.Context, fn func(q querier) error) error
	// writeOne runs one statement that changes the database, atomic on its
	// own, without the cost of a transaction around it. It may run it twice
	// (a lost connection's is retried, see pgDB.retrying), so the statement
	// must change nothing the second time.
	writeOne(ctx context.Context, sql string, args ...any) (rowsAffected int64, err error)
	// forUpdate is the clause that locks the rows a SELECT reads.
	forUpdate() string
	migrate(ctx context.Context, ms []migration) error
	ping(ctx context.Context) error
	close() error
}

type querier interface {
	exec(ctx context.Context, sql string, args ...any) (rowsAffected int64, err error)
	// execLater runs a statement whose outcome is needed no sooner than the
	// transaction's end. An engine may hold it back to send with the next
	// statement or the commit, saving a round trip; its error, named by
	// what, then fails that statement or the commit instead.
	execLater(ctx context.Context, what, sql string, args ...any) error
	query(ctx context.Context, sql string, args ...any) (rows, error)
	// queryRow's Scan returns errNoRows when nothing matched.
	queryRow(ctx context.Context, sql string, args ...any) row
}

type row interface {
	Scan(dest ...any) error
}

type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// errNoRows stands for each driver's own no-rows error.
var errNoRows = errors.New("no rows")

// rowFunc adapts a driver's Scan to report errNoRows.
type rowFunc func(dest ...any) error

func (f rowFunc) Scan(dest ...any) error { return f(dest...) }

// collect runs a query and scans every row with scan.
func collect[T any](ctx context.Context, q querier, scan func(rows) (T, error), sql string, args ...any) ([]T, error) {
	rs, err := q.query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []T
	for rs.Next() {
		v, err := scan(rs)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rs.Err()
}
