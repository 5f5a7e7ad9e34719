// Package pgtest starts throwaway PostgreSQL servers for tests, from the
// binaries of a local installation (Debian's postgresql package or any
// initdb/postgres pair on PATH). Nothing is installed or downloaded: without
// the binaries, tests skip with the reason.
//
// A test asks for a database with Start. A package whose tests all share one
// server (started on first use, stopped at exit) runs them through Main:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestX(t *testing.T) {
//		dsn := pgtest.Start(t) // a fresh, empty database
//		...
//	}
//
// Without Main, Start runs a server for the one test. Code outside a test
// (an end-to-end harness, a benchmark) can use NewServer directly.
package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrUnavailable means this machine cannot run a server: no binaries, or
// running as root without a postgres user to run them as.
var ErrUnavailable = errors.New("pgtest: PostgreSQL unavailable")

// Server is one running PostgreSQL cluster, owned by this process.
type Server struct {
	dir    string // holds data/, the socket and postgres.log
	bin    string
	cred   *syscall.Credential
	port   int
	cmd    *exec.Cmd
	exited chan struct{} // closed when the postmaster exits

	mu    sync.Mutex // serialises CREATE/DROP DATABASE on admin
	admin *pgx.Conn

	stopOnce sync.Once
}

// NewServer creates a cluster in a temporary directory and starts it on a
// free loopback port. Durability is off (fsync, full page writes): the data
// lives only as long as the test.
func NewServer(ctx context.Context) (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	// Not t.TempDir: its parents are private to root, and the server may run
	// as the postgres user. The socket path must also stay short (< 108 bytes).
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	s := &Server{dir: dir, bin: bin, cred: cred, exited: make(chan struct{})}
	if err := s.initdb(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// A port picked free can be taken before the server binds it; try again.
	for attempt := 0; ; attempt++ {
		port, perr := freePort()
		if perr != nil {
			os.RemoveAll(dir)
			return nil, perr
		}
		err = s.start(ctx, port)
		if err == nil || attempt == 2 || ctx.Err() != nil {
			break
		}
		s.exited = make(chan struct{})
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) initdb(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "initdb"),
		"-D", filepath.Join(s.dir, "data"), "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return nil
}

func (s *Server) start(ctx context.Context, port int) error {
	logPath := filepath.Join(s.dir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	// The postmaster is our child, not a pg_ctl daemon, so it cannot outlive
	// the test binary: SIGQUIT (immediate shutdown) reaches it if we die.
	cmd := exec.Command(filepath.Join(s.bin, "postgres"),
		"-D", filepath.Join(s.dir, "data"), "-k", s.dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGQUIT}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	s.cmd, s.port = cmd, port
	exited := s.exited
	go func() { cmd.Wait(); close(exited) }()

	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, s.dsn("postgres"))
		if err == nil {
			s.admin = conn
			return nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("pgtest: postgres exited during start-up: %s", tail(log, 2000))
		case <-ctx.Done():
			s.kill()
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("pgtest: postgres not ready after 30s: %w", err)
		}
	}
}

func (s *Server) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// CreateDatabase makes an empty database and returns its DSN and name.
func (s *Server) CreateDatabase(ctx context.Context) (dsn, name string, err error) {
	b := make([]byte, 8)
	rand.Read(b)
	name = "t_" + hex.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", "", fmt.Errorf("pgtest: create database: %w", err)
	}
	return s.dsn(name), name, nil
}

// DropDatabase removes a database, disconnecting anyone still using it.
func (s *Server) DropDatabase(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

// Crash stops the server as `pg_ctl stop -m immediate` does (SIGQUIT, every
// client's connection cut), keeping its files for Restart. What was
// committed before survives, as on a durable server: this one commits
// without waiting for its log (synchronous_commit=off), so Crash
// checkpoints first.
func (s *Server) Crash(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.admin.Exec(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("pgtest: checkpoint before the crash: %w", err)
	}
	s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.kill()
	}
	if s.admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		s.admin.Close(ctx)
		cancel()
		s.admin = nil
	}
	return nil
}

// Restart starts a crashed server again on its port and data, after crash
// recovery; the DSNs handed out before still work.
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exited = make(chan struct{})
	return s.start(ctx, s.port)
}

// Freeze stops every process of the server (SIGSTOP), which is how a
// database that hangs, or a network that drops its packets, looks to its
// clients: connections stay open and nothing answers. Thaw resumes it.
func (s *Server) Freeze() error { return s.signalAll(syscall.SIGSTOP) }

// Thaw resumes a frozen server.
func (s *Server) Thaw() error { return s.signalAll(syscall.SIGCONT) }

// signalAll signals the postmaster and its children. Each child makes
// itself a process group leader, so the postmaster's group does not reach
// them; a stopped postmaster forks no new ones.
func (s *Server) signalAll(sig syscall.Signal) error {
	pm := s.cmd.Process.Pid
	if err := syscall.Kill(pm, sig); err != nil {
		return err
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(pm) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		syscall.Kill(pid, sig)
	}
	return nil
}

// Stop shuts the server down and deletes its files. It is safe to call twice.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		if s.admin != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			s.admin.Close(ctx)
			cancel()
		}
		s.cmd.Process.Signal(syscall.SIGINT) // fast shutdown: no waiting for clients
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			s.kill()
		}
		os.RemoveAll(s.dir)
	})
}

func (s *Server) kill() {
	s.cmd.Process.Kill()
	<-s.exited
}

// binDir finds the directory holding initdb and postgres: PATH first, then
// the newest /usr/lib/postgresql/<version>/bin.
func binDir() (string, error) {
	var dirs []string
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	versions, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(versions, func(i, j int) bool { return pgVersion(versions[i]) > pgVersion(versions[j]) })
	dirs = append(dirs, versions...)
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: no initdb and postgres binaries on PATH or in /usr/lib/postgresql/*/bin (apt-get install postgresql)", ErrUnavailable)
}

func pgVersion(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// credential says whom to run the server as: initdb and postgres refuse to
// run as root, so root hands them to the postgres user.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("%w: running as root and there is no postgres user to run the server as", ErrUnavailable)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("pgtest: postgres user: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
