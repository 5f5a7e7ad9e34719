package pgtest

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"
)

// shared is the server of a test binary that runs through Main.
var shared struct {
	sync.Mutex
	enabled bool
	srv     *Server
	err     error
}

// Main runs m's tests, letting every Start share one server, started by the
// first test that needs it, and stops that server before exiting.
func Main(m *testing.M) {
	shared.Lock()
	shared.enabled = true
	shared.Unlock()
	code := m.Run()
	shared.Lock()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	shared.Unlock()
	os.Exit(code)
}

// Start returns the DSN of a new, empty database, dropped when t ends. It
// skips t when this machine cannot run PostgreSQL, and fails it when a
// server that should start does not.
func Start(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := server(ctx, t)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("PostgreSQL tests skipped: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	dsn, name, err := srv.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.DropDatabase(ctx, name); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return dsn
}

func server(ctx context.Context, t testing.TB) (*Server, error) {
	shared.Lock()
	defer shared.Unlock()
	if !shared.enabled {
		srv, err := NewServer(ctx)
		if err == nil {
			t.Cleanup(srv.Stop)
		}
		return srv, err
	}
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = NewServer(ctx)
	}
	return shared.srv, shared.err
}
