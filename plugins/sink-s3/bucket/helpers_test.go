package bucket

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mdpress/mdpress/sdk/plugintest/s3test"
	"github.com/mdpress/mdpress/sdk/stage"
)

func TestMain(m *testing.M) { os.Exit(s3test.Run(m)) }

// clock is a settable time source shared with the sweeper goroutine. It
// starts at the real time because the server's timestamps are real.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().UTC().Round(0)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// noEnv hides the process environment from the credential choice.
func noEnv(string) string { return "" }

// s3Config is the config block for a fresh bucket on the shared server,
// with extra keys merged in.
func s3Config(t testing.TB, extra map[string]any) map[string]any {
	t.Helper()
	endpoint, key, secret := s3test.Shared(t)
	cfg := map[string]any{
		"endpoint":        endpoint,
		"region":          s3test.Region,
		"bucket":          s3test.Bucket(t),
		"usePathStyle":    true,
		"accessKeyID":     key,
		"secretAccessKey": secret,
		"createBucket":    true,
	}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

// configured returns a Sink on a fresh bucket, closed when the test ends.
func configured(t testing.TB, extra map[string]any, opts ...Option) *Sink {
	t.Helper()
	return configure(t, s3Config(t, extra), opts...)
}

func configure(t testing.TB, cfg map[string]any, opts ...Option) *Sink {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := New(testLogger(t), append([]Option{WithGetenv(noEnv)}, opts...)...)
	if _, err := s.Configure(context.Background(), &stage.ConfigureRequest{Config: raw}); err != nil {
		t.Fatalf("configure: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func store(t testing.TB, s *Sink, pdf []byte, ttl time.Duration) *stage.StoreResponse {
	t.Helper()
	resp, err := s.Store(context.Background(), &stage.StoreRequest{Owner: "user-1", Filename: "Report.pdf", PDF: pdf, TTL: ttl})
	if err != nil {
		t.Fatalf("store: %v", err)
	}
	return resp
}

func readRange(t testing.TB, s *Sink, id string, off, n int64) ([]byte, *stage.OpenResponse) {
	t.Helper()
	resp, err := s.Open(context.Background(), &stage.OpenRequest{ID: id, Offset: off, Length: n})
	if err != nil {
		t.Fatalf("open %s [%d,%d]: %v", id, off, n, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return b, resp
}

func wantCode(t testing.TB, err error, code stage.Code) {
	t.Helper()
	var se *stage.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v: want a *stage.Error with code %s", err, code)
	}
	if se.Code != code {
		t.Fatalf("error %v: code %s, want %s", err, se.Code, code)
	}
}

// head asks the server directly about the object holding id.
func head(t testing.TB, s *Sink, id string) (*s3.HeadObjectOutput, error) {
	t.Helper()
	st := s.cur.Load()
	return st.client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &st.cfg.Bucket, Key: aws.String(st.key(id))})
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}
