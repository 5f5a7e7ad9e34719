package disk

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// clock is a settable time source shared with the sweeper goroutine. It
// starts at the real time because file modification times are real.
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
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// configured returns a Disk on dir, closed when the test ends.
func configured(t testing.TB, dir string, c *clock, extra map[string]any) *Disk {
	t.Helper()
	cfg := map[string]any{"dir": dir}
	for k, v := range extra {
		cfg[k] = v
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := New(testLogger(t), WithClock(c.Now))
	if _, err := d.Configure(context.Background(), &stage.ConfigureRequest{Config: raw}); err != nil {
		t.Fatalf("configure: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func store(t testing.TB, d *Disk, pdf []byte, ttl time.Duration) *stage.StoreResponse {
	t.Helper()
	resp, err := d.Store(context.Background(), &stage.StoreRequest{Owner: "user-1", Filename: "Report.pdf", PDF: pdf, TTL: ttl})
	if err != nil {
		t.Fatalf("store: %v", err)
	}
	return resp
}

// readRange opens id's range and returns the body's bytes and the response.
func readRange(t testing.TB, d *Disk, id string, off, n int64) ([]byte, *stage.OpenResponse) {
	t.Helper()
	resp, err := d.Open(context.Background(), &stage.OpenRequest{ID: id, Offset: off, Length: n})
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
