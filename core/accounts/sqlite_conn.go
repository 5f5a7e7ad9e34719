package accounts

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
)

// The store talks to modernc's driver connections directly, with
// database/sql only as their pool. Through database/sql every statement
// cost more than running it: modernc compiles each text it is handed afresh,
// a transaction and each query inside one start a goroutine to watch the
// context, and modernc starts another per statement to interrupt it. Here a
// connection keeps its compiled statements, and a statement runs under a
// context that cannot be cancelled once ctx has been checked: the store's
// statements are short, WAL readers do not wait for writers, and inside a
// write transaction nothing waits for a lock. The one wait worth cutting
// short, for another process's write lock, comes where a write starts
// (BEGIN IMMEDIATE, or writeOne's lone statement), and that keeps ctx.

// sqliteConnector hands database/sql connections that keep their statements.
type sqliteConnector struct{ driver.Connector }

func (c sqliteConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &sqliteConn{Conn: dc, stmts: make(map[string]driver.Stmt)}, nil
}

// sqliteConn is one driver connection. database/sql lends it to one caller
// at a time, which is what guards stmts.
type sqliteConn struct {
	driver.Conn
	stmts map[string]driver.Stmt // by SQL text; the store's texts are a fixed set
}

func (c *sqliteConn) Close() error {
	for _, st := range c.stmts {
		st.Close()
	}
	return c.Conn.Close()
}

// ResetSession and IsValid let the driver tell database/sql that a pooled
// connection is broken.
func (c *sqliteConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *sqliteConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// prepare returns query compiled on c; with keep it stays compiled for the
// next call, else done closes it.
func (c *sqliteConn) prepare(query string, keep bool) (st driver.Stmt, done func(), err error) {
	if st, ok := c.stmts[query]; ok {
		return st, func() {}, nil
	}
	if st, err = c.Conn.Prepare(query); err != nil {
		return nil, nil, err
	}
	if !keep {
		return st, func() { st.Close() }, nil
	}
	c.stmts[query] = st
	return st, func() {}, nil
}

// exec runs query on c. ctx is checked first; dctx is what the driver
// watches while the statement runs.
func (c *sqliteConn) exec(ctx, dctx context.Context, keep bool, query string, args []any) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	nv, err := namedValues(args)
	if err != nil {
		return 0, err
	}
	st, done, err := c.prepare(query, keep)
	if err != nil {
		return 0, err
	}
	defer done()
	res, err := st.(driver.StmtExecContext).ExecContext(dctx, nv)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// query runs query on c and hands each row to each; the values are the
// driver's own (int64, float64, string, []byte, nil) and stay valid after.
func (c *sqliteConn) query(ctx context.Context, keep bool, query string, args []any, each func([]driver.Value) (more bool)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	nv, err := namedValues(args)
	if err != nil {
		return err
	}
	st, done, err := c.prepare(query, keep)
	if err != nil {
		return err
	}
	defer done()
	rs, err := st.(driver.StmtQueryContext).QueryContext(context.Background(), nv)
	if err != nil {
		return err
	}
	defer rs.Close()
	n := len(rs.Columns())
	for {
		vals := make([]driver.Value, n)
		switch err := rs.Next(vals); {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		if !each(vals) {
			return nil
		}
	}
}

func namedValues(args []any) ([]driver.NamedValue, error) {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return nil, fmt.Errorf("sqlite: argument $%d: %w", i+1, err)
		}
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return nv, nil
}

// scanValues stores one row's values into dest, which holds the pointer
// types the store scans into.
func scanValues(vals []driver.Value, dest []any) error {
	if len(vals) != len(dest) {
		return fmt.Errorf("sqlite: %d columns scanned into %d destinations", len(vals), len(dest))
	}
	for i, v := range vals {
		var ok bool
		switch d := dest[i].(type) {
		case *string:
			var s string
			if s, ok = v.(string); !ok {
				var b []byte
				b, ok = v.([]byte)
				s = string(b)
			}
			*d = s
		case *int64:
			*d, ok = v.(int64)
		case *int:
			var n int64
			n, ok = v.(int64)
			*d = int(n)
		default:
			return fmt.Errorf("sqlite: column %d: cannot scan into %T", i, dest[i])
		}
		if !ok {
			return fmt.Errorf("sqlite: column %d: cannot scan %T into %T", i, v, dest[i])
		}
	}
	return nil
}

// sqliteQuerier runs statements on one lent connection, inside a
// transaction or not.
type sqliteQuerier struct {
	c    *sqliteConn
	keep bool // keep statements compiled; one-off SQL (migrations) is not
}

func (q sqliteQuerier) exec(ctx context.Context, query string, args ...any) (int64, error) {
	return q.c.exec(ctx, context.Background(), q.keep, query, args)
}

// execLater runs at once: there is no round trip to save in-process.
func (q sqliteQuerier) execLater(ctx context.Context, what, query string, args ...any) error {
	if _, err := q.exec(ctx, query, args...); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func (q sqliteQuerier) query(ctx context.Context, query string, args ...any) (rows, error) {
	var rs sqliteRows
	err := q.c.query(ctx, q.keep, query, args, func(vals []driver.Value) bool {
		rs.all = append(rs.all, vals)
		return true
	})
	if err != nil {
		return nil, err
	}
	return &rs, nil
}

func (q sqliteQuerier) queryRow(ctx context.Context, query string, args ...any) row {
	var vals []driver.Value
	err := q.c.query(ctx, q.keep, query, args, func(v []driver.Value) bool {
		vals = v
		return false
	})
	return rowFunc(func(dest ...any) error {
		switch {
		case err != nil:
			return err
		case vals == nil:
			return errNoRows
		}
		return scanValues(vals, dest)
	})
}

// sqliteRows is a query's result, read in full while the connection was
// lent: a handful of rows for the store's queries.
type sqliteRows struct {
	all [][]driver.Value
	cur []driver.Value
}

func (r *sqliteRows) Next() bool {
	if len(r.all) == 0 {
		r.cur = nil
		return false
	}
	r.cur, r.all = r.all[0], r.all[1:]
	return true
}

func (r *sqliteRows) Scan(dest ...any) error {
	if r.cur == nil {
		return errors.New("sqlite: Scan without a row")
	}
	return scanValues(r.cur, dest)
}

func (r *sqliteRows) Err() error { return nil }

func (r *sqliteRows) Close() {}
