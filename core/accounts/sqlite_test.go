package accounts

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSQLiteAcrossProcesses is what happens in the embedded deployment: the
// auth and meter plugins and the accounts CLI open one file from separate
// processes. Three processes share 60 attempts on 20 credits.
func TestSQLiteAcrossProcesses(t *testing.T) {
	if os.Getenv("ACCOUNTS_HELPER_DB") != "" {
		t.Skip("running as a helper")
	}
	b := backends[0]
	dsn := b.newDB(t)
	s := open(t, b, dsn)
	a := must[Account](t)(s.CreateAccount(t.Context(), "free", ptr[int64](20)))

	const procs, attempts = 3, 20
	// Every helper has its store open before any of them starts reserving.
	outs, cmds := startTogether(t, procs, "TestSQLiteHelperProcess", "ready",
		"ACCOUNTS_HELPER_DB="+dsn, "ACCOUNTS_HELPER_USER="+a.ID, "ACCOUNTS_HELPER_ATTEMPTS="+strconv.Itoa(attempts))
	ok, forbidden := 0, 0
	for i, out := range outs {
		line, err := lineWith(out, "ok=")
		if err != nil {
			t.Fatalf("helper %d: %v", i, err)
		}
		var o, f int
		if _, err := fmt.Sscanf(line, "ok=%d forbidden=%d", &o, &f); err != nil {
			t.Fatalf("helper %d said %q: %v", i, line, err)
		}
		ok, forbidden = ok+o, forbidden+f
		if err := cmds[i].Wait(); err != nil {
			t.Errorf("helper %d: %v", i, err)
		}
	}
	if ok != 20 || forbidden != procs*attempts-20 {
		t.Errorf("%d reserved, %d refused across %d processes; want exactly 20 and %d", ok, forbidden, procs, procs*attempts-20)
	}
	checkLedger(t, s, a.ID)
}

// TestSQLiteHelperProcess is one process of TestSQLiteAcrossProcesses.
func TestSQLiteHelperProcess(t *testing.T) {
	dsn := os.Getenv("ACCOUNTS_HELPER_DB")
	if dsn == "" {
		t.Skip("only runs as a helper of TestSQLiteAcrossProcesses")
	}
	attempts, _ := strconv.Atoi(os.Getenv("ACCOUNTS_HELPER_ATTEMPTS"))
	s := open(t, backends[0], dsn)
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin) // the parent closes stdin to start us all at once
	ok, forbidden := burst(t, []Store{s}, os.Getenv("ACCOUNTS_HELPER_USER"), attempts)
	fmt.Printf("ok=%d forbidden=%d\n", ok, forbidden)
}

// startTogether runs n copies of this test binary as helper test, with env
// added, waits until each has printed a line starting with ready, then
// lets them all go at once by closing their stdin. It returns their output
// and commands.
func startTogether(t *testing.T, n int, test, ready string, env ...string) ([]*bufio.Reader, []*exec.Cmd) {
	t.Helper()
	var starts []io.WriteCloser
	var outs []*bufio.Reader
	var cmds []*exec.Cmd
	for range n {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+test+"$")
		cmd.Env = append(os.Environ(), env...)
		cmd.Stderr = os.Stderr
		stdin := must[io.WriteCloser](t)(cmd.StdinPipe())
		stdout := must[io.ReadCloser](t)(cmd.StdoutPipe())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, starts, outs = append(cmds, cmd), append(starts, stdin), append(outs, bufio.NewReader(stdout))
	}
	for _, out := range outs {
		if _, err := lineWith(out, ready); err != nil {
			t.Fatalf("helper: %v", err)
		}
	}
	for _, w := range starts {
		w.Close()
	}
	return outs, cmds
}

// lineWith reads up to the first line that starts with prefix.
func lineWith(r *bufio.Reader, prefix string) (string, error) {
	for {
		line, err := r.ReadString('\n')
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(line), nil
		}
		if err != nil {
			return "", fmt.Errorf("no line starting %q: %w", prefix, err)
		}
	}
}

// TestSQLiteLockWaitEndsWithContext: a writer waiting for another
// connection's write lock gives up when its context ends, not after the
// busy timeout, and leaves the balance as it was.
func TestSQLiteLockWaitEndsWithContext(t *testing.T) {
	b := backends[0]
	dsn := b.newDB(t)
	holder, waiter := open(t, b, dsn), open(t, b, dsn)
	a := must[Account](t)(holder.CreateAccount(t.Context(), "free", ptr[int64](5)))

	locked, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	pending := must[Reservation](t)(first(waiter.Reserve(t.Context(), ReserveParams{UserID: a.ID, Credits: 1})))
	go func() {
		held <- holder.(*store).db.write(t.Context(), func(querier) error {
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	for _, tc := range []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Reserve", func(ctx context.Context) error {
			return lastErr(waiter.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: 1}))
		}},
		{"Commit", func(ctx context.Context) error { return waiter.Commit(ctx, pending.ID, "") }},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		start := time.Now()
		err := tc.call(ctx)
		waited := time.Since(start)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s behind a held write lock: %v, want the context's deadline", tc.name, err)
		}
		if waited > 5*time.Second {
			t.Errorf("%s waited %v for the lock, past its context's end", tc.name, waited)
		}
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	// The connections that gave up are still good, and nothing was done.
	if err := waiter.Commit(t.Context(), pending.ID, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := waiter.Reserve(t.Context(), ReserveParams{UserID: a.ID, Credits: 1}); err != nil {
		t.Fatal(err)
	}
	if got := must[Account](t)(waiter.Account(t.Context(), a.ID)).Credits; got != 3 {
		t.Errorf("balance %d, want 3: two charges", got)
	}
	checkLedger(t, waiter, a.ID)
}

// TestCanceledContext: a call whose context has ended changes nothing.
func TestCanceledContext(t *testing.T) {
	for _, b := range backends {
		t.Run(b.driver, func(t *testing.T) {
			s := open(t, b, b.newDB(t))
			a := must[Account](t)(s.CreateAccount(t.Context(), "free", ptr[int64](5)))
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			if _, _, err := s.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: 1}); !errors.Is(err, context.Canceled) {
				t.Errorf("Reserve: %v, want context.Canceled", err)
			}
			if _, _, err := s.Authenticate(ctx, KeyPrefix+strings.Repeat("a", keyLen-len(KeyPrefix))); !errors.Is(err, context.Canceled) {
				t.Errorf("Authenticate: %v, want context.Canceled", err)
			}
			if got := must[Account](t)(s.Account(t.Context(), a.ID)).Credits; got != 5 {
				t.Errorf("balance %d, want 5", got)
			}
			checkLedger(t, s, a.ID)
		})
	}
}

// TestSQLiteConnectionSettings: every connection the store opens keeps the
// durability and locking settings the DSN asks for.
func TestSQLiteConnectionSettings(t *testing.T) {
	b := backends[0]
	db := open(t, b, b.newDB(t)).(*store).db.(*sqliteDB)
	want := map[string]int64{
		"synchronous":  1, // NORMAL
		"foreign_keys": 1,
		"busy_timeout": sqliteBusyTimeoutMS,
	}
	// Hold every connection at once, so that each is checked.
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range sqliteMaxConns {
		wg.Go(func() {
			err := db.lend(t.Context(), func(c *sqliteConn) error {
				<-start
				q := sqliteQuerier{c: c, keep: false}
				var mode string
				if err := q.queryRow(t.Context(), "PRAGMA journal_mode").Scan(&mode); err != nil {
					return err
				}
				if mode != "wal" {
					t.Errorf("PRAGMA journal_mode = %s, want wal", mode)
				}
				for name, v := range want {
					var got int64
					if err := q.queryRow(t.Context(), "PRAGMA "+name).Scan(&got); err != nil {
						return err
					}
					if got != v {
						t.Errorf("PRAGMA %s = %d, want %d", name, got, v)
					}
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
}

// TestSQLiteNewFileOpenedAtOnce is a fresh host's start: the auth and meter
// plugins open a file that does not exist yet at the same moment. Both must
// get a store (the loser of the race to switch the file to WAL used to fail
// with SQLITE_BUSY).
func TestSQLiteNewFileOpenedAtOnce(t *testing.T) {
	if os.Getenv("ACCOUNTS_OPEN_DB") != "" {
		t.Skip("running as a helper")
	}
	const rounds, procs = 40, 4
	for round := range rounds {
		dsn := filepath.Join(t.TempDir(), "mdpress.db")
		outs, cmds := startTogether(t, procs, "TestSQLiteOpenHelperProcess", "waiting", "ACCOUNTS_OPEN_DB="+dsn)
		for i, out := range outs {
			line, err := lineWith(out, "open")
			if err != nil || line != "opened" {
				t.Errorf("round %d, process %d: %q %v", round, i, line, err)
			}
			_ = cmds[i].Wait()
		}
	}
}

// TestSQLiteOpenHelperProcess is one process of TestSQLiteNewFileOpenedAtOnce.
func TestSQLiteOpenHelperProcess(t *testing.T) {
	dsn := os.Getenv("ACCOUNTS_OPEN_DB")
	if dsn == "" {
		t.Skip("only runs as a helper of TestSQLiteNewFileOpenedAtOnce")
	}
	fmt.Println("waiting")
	io.Copy(io.Discard, os.Stdin) // the parent closes stdin to start us all at once
	s, err := Open(t.Context(), DriverSQLite, dsn, testPlans)
	if err != nil {
		fmt.Printf("open failed: %v\n", err)
		return
	}
	s.Close()
	fmt.Println("opened")
}
