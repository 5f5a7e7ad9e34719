package pgtest

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestServerLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := NewServer(ctx)
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()

	dsnA, nameA, err := srv.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dsnB, _, err := srv.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, err := pgx.Connect(ctx, dsnA)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, "CREATE TABLE only_in_a (x int)"); err != nil {
		t.Fatal(err)
	}
	b, err := pgx.Connect(ctx, dsnB)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	var n int
	if err := b.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("databases are not separate: n=%d err=%v", n, err)
	}
	var fsync string
	if err := b.QueryRow(ctx, "SHOW fsync").Scan(&fsync); err != nil || fsync != "off" {
		t.Errorf("fsync = %q (%v), want off", fsync, err)
	}

	// Dropping a database that still has a client must not hang.
	if err := srv.DropDatabase(ctx, nameA); err != nil {
		t.Fatalf("drop with a client connected: %v", err)
	}

	dir := srv.dir
	srv.Stop()
	srv.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("data directory %s left behind (%v)", dir, err)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(srv.port), time.Second); err == nil {
		c.Close()
		t.Errorf("server still listening on %d after Stop", srv.port)
	}
}

func TestStartWithoutMain(t *testing.T) {
	dsn := Start(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
}
