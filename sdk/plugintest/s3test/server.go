package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Region is the region the server answers for.
const Region = "us-east-1"

// Server is a running versitygw.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string

	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has exited
	output  *tail
	dir     string
	ownsDir bool
	once    sync.Once
}

// Launch starts a server storing its buckets under dir (a fresh temp dir,
// removed by Close, when dir is empty) and returns once it answers. An
// error wrapping ErrUnavailable means no binary could be had.
func Launch(dir string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	ownsDir := dir == ""
	if ownsDir {
		if dir, err = os.MkdirTemp("", "s3test-"); err != nil {
			return nil, err
		}
	}
	// The port is picked free and handed over, so another process may take
	// it in between; a few attempts make that harmless.
	for attempt := 0; ; attempt++ {
		s, err := start(bin, dir)
		if err == nil {
			s.ownsDir = ownsDir
			return s, nil
		}
		if attempt == 2 {
			if ownsDir {
				os.RemoveAll(dir)
			}
			return nil, err
		}
	}
}

func start(bin, dir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{
		Endpoint:  "http://" + port,
		AccessKey: "mdpress" + randomHex(6),
		SecretKey: randomHex(20),
		exited:    make(chan struct{}),
		output:    &tail{max: 16 << 10},
		dir:       dir,
	}
	s.cmd = exec.Command(bin, "--access", s.AccessKey, "--secret", s.SecretKey,
		"--region", Region, "--port", port, "--quiet", "posix", dir)
	s.cmd.Stdout = s.output
	s.cmd.Stderr = s.output
	s.cmd.SysProcAttr = procAttr()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(10 * time.Second); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// waitReady polls until the server answers HTTP at all; an unsigned request
// gets a 403, which is an answer.
func (s *Server) waitReady(limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Endpoint+"/", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("versitygw exited before answering: %s", s.output)
		case <-ctx.Done():
			return fmt.Errorf("versitygw did not answer at %s within %v: %s", s.Endpoint, limit, s.output)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Close stops the server and removes its directory if Launch made it. It
// is safe to call more than once.
func (s *Server) Close() error {
	s.once.Do(func() {
		if s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
		if s.ownsDir {
			_ = os.RemoveAll(s.dir)
		}
	})
	return nil
}

// Output returns the last lines the server printed, for failure messages.
func (s *Server) Output() string { return s.output.String() }

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := strings.TrimSpace(string(t.buf)); s != "" {
		return s
	}
	return "(no output)"
}

var errClosed = errors.New("s3test: shared server already stopped")
