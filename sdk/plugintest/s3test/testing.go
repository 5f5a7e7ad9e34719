package s3test

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// Start runs a server for this test alone, stopped in t.Cleanup. It skips
// the test when no server can be had and fails it when one will not start.
func Start(t testing.TB) (endpoint, accessKey, secretKey string) {
	t.Helper()
	s, err := Launch(t.TempDir())
	if err != nil {
		skipOrFail(t, err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Endpoint, s.AccessKey, s.SecretKey
}

// shared is the server of Shared, started on first use.
var shared struct {
	mu     sync.Mutex
	server *Server
	err    error
	done   bool // Run has stopped it
}

// Shared returns the test binary's one server, starting it on first use.
// Tests sharing it should keep apart by bucket (see Bucket). Call Run from
// TestMain so it is stopped after the last test; without that the server
// still dies with the test binary, but its temp dir stays.
func Shared(t testing.TB) (endpoint, accessKey, secretKey string) {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	switch {
	case shared.done:
		shared.err = errClosed
	case shared.server == nil && shared.err == nil:
		shared.server, shared.err = Launch("")
	}
	if shared.err != nil {
		skipOrFail(t, shared.err)
	}
	return shared.server.Endpoint, shared.server.AccessKey, shared.server.SecretKey
}

// Run runs the tests and then stops the shared server, if one was started.
// Use it as os.Exit(s3test.Run(m)) in TestMain.
func Run(m *testing.M) int {
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.server != nil {
		shared.server.Close()
	}
	shared.done = true
	return code
}

// Bucket returns a bucket name no other test uses: the test's name made
// DNS-safe, plus random digits.
func Bucket(t testing.TB) string {
	var b strings.Builder
	b.WriteString("t-")
	for _, r := range strings.ToLower(t.Name()) {
		if b.Len() >= 40 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	if !strings.HasSuffix(b.String(), "-") {
		b.WriteByte('-')
	}
	b.WriteString(randomHex(4))
	return b.String()
}

func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("S3 tests skipped: %v", err)
	}
	t.Fatalf("S3 server: %v", err)
}
