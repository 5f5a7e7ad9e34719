package api

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/pipeline"
	"github.com/mdpress/mdpress/sdk/stage"
)

// TestParseRange follows RFC 9110 14.2: a single byte range is served or
// refused as unsatisfiable; any other Range (another unit, a malformed
// range, several ranges) is ignored and the whole file served.
func TestParseRange(t *testing.T) {
	const size = 1000
	tests := []struct {
		h         string
		start, n  int64
		valid, ok bool
	}{
		{"bytes=0-99", 0, 100, true, true},
		{"bytes=-50", 950, 50, true, true},
		{"bytes=900-", 900, 100, true, true},
		{"bytes=990-2000", 990, 10, true, true},
		{"bytes=-5000", 0, 1000, true, true},
		{"bytes=1000-", 0, 0, true, false},
		{"bytes=5000-6000", 0, 0, true, false},
		{"bytes=-0", 0, 0, true, false},
		{"items=0-5", 0, 0, false, false},
		{"bytes=5-3", 0, 0, false, false},
		{"bytes=abc", 0, 0, false, false},
		{"bytes=a-b", 0, 0, false, false},
		{"bytes=99999-,0-1", 0, 0, false, false},
		{"bytes=0-1,5-6", 0, 0, false, false},
		{"bytes=10-99999999999999999999999", 10, 990, true, true},
		{"bytes=-99999999999999999999999", 0, 1000, true, true},
		{"bytes=99999999999999999999999-", 0, 0, true, false},
		{"bytes=+5-10", 0, 0, false, false},
		{"bytes=5-+10", 0, 0, false, false},
	}
	for _, tt := range tests {
		start, n, valid, ok := parseRange(tt.h, size)
		if start != tt.start || n != tt.n || valid != tt.valid || ok != tt.ok {
			t.Errorf("%q: %d+%d valid=%v ok=%v, want %d+%d valid=%v ok=%v", tt.h, start, n, valid, ok, tt.start, tt.n, tt.valid, tt.ok)
		}
	}
}

// TestDownloadPlaces: downloads stream within a bound in all and per
// client address, and a place is free again once its download ends.
func TestDownloadPlaces(t *testing.T) {
	d := newDownloads(10)
	r := httptest.NewRequest("GET", "/v1/files/x", nil)
	r.RemoteAddr = "192.0.2.1:1234"
	var releases []func()
	for range downloadsPerAddress {
		rel, ok := d.enter(clientAddr(r, nil))
		if !ok {
			t.Fatal("refused within the per-address bound")
		}
		releases = append(releases, rel)
	}
	if _, ok := d.enter(clientAddr(r, nil)); ok {
		t.Fatal("one address took more than its places")
	}
	other := httptest.NewRequest("GET", "/v1/files/x", nil)
	other.RemoteAddr = "192.0.2.2:1234"
	for range 10 - downloadsPerAddress {
		rel, ok := d.enter(clientAddr(other, nil))
		if !ok {
			t.Fatal("another address refused within the total")
		}
		releases = append(releases, rel)
	}
	third := httptest.NewRequest("GET", "/v1/files/x", nil)
	third.RemoteAddr = "192.0.2.3:1234"
	if _, ok := d.enter(clientAddr(third, nil)); ok {
		t.Fatal("a download past the total")
	}
	releases[0]()
	if _, ok := d.enter(clientAddr(third, nil)); !ok {
		t.Fatal("a place freed by a finished download is not taken")
	}
}

// TestFileCachedNoLongerThanItLives: the Cache-Control max-age of a hosted
// file ends when the file expires.
func TestFileCachedNoLongerThanItLives(t *testing.T) {
	for _, tt := range []struct {
		left time.Duration
		want string
	}{
		{10 * time.Minute, "max-age=59"}, // 599 or 600
		{48 * time.Hour, "max-age=3600"},
		{-time.Minute, "max-age=0"},
	} {
		w := httptest.NewRecorder()
		setFileHeaders(w, &stage.OpenResponse{ExpiresAt: time.Now().Add(tt.left)})
		if got := w.Header().Get("Cache-Control"); !strings.Contains(got, tt.want) {
			t.Errorf("%v left: Cache-Control %q, want %s", tt.left, got, tt.want)
		}
	}
}

// slowBody yields n pieces of 64 KiB, one every gap.
type slowBody struct {
	n   int
	gap time.Duration
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.n == 0 {
		return 0, io.EOF
	}
	time.Sleep(b.gap)
	b.n--
	return copy(p, make([]byte, 64<<10)), nil
}

// TestDownloadOutlivesWriteTimeout: a download runs as long as its client
// keeps taking it, past the server's write timeout (sized for
// conversions), which would otherwise cut a slow client's file short.
func TestDownloadOutlivesWriteTimeout(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(8*64<<10))
		_ = s.stream(w, r, &slowBody{n: 8, gap: 100 * time.Millisecond}, "test")
	}))
	srv.Config.WriteTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || n != 8*64<<10 {
		t.Fatalf("read %d bytes of %d: %v", n, 8*64<<10, err)
	}
}

// pieceWriter is a connection that checks what is written against want,
// keeping nothing, and notes the largest write.
type pieceWriter struct {
	h       http.Header
	want    []byte
	off     int
	largest int
	wrong   bool
}

func (w *pieceWriter) Header() http.Header { return w.h }
func (w *pieceWriter) WriteHeader(int)     {}
func (w *pieceWriter) Flush()              {}
func (w *pieceWriter) Write(p []byte) (int, error) {
	w.wrong = w.wrong || !bytes.Equal(p, w.want[w.off:min(len(w.want), w.off+len(p))])
	w.off += len(p)
	w.largest = max(w.largest, len(p))
	return len(p), nil
}

// TestAnswerWritesThePDFAsIs: a PDF answer is written from the PDF itself,
// in pieces of at most 64 KiB, each paced as a download is. Read through a
// buffer of its own, it cost every conversion a 64 KiB allocation, zeroed
// and copied through, a third of what the host allocated per conversion.
func TestAnswerWritesThePDFAsIs(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	pdf := bytes.Repeat([]byte("%PDF-1.7 0123456789abcdef"), 1<<20/25)
	r := httptest.NewRequest(http.MethodPost, "/v1/pdf/markdown", nil)
	least := uint64(math.MaxUint64)
	for range 3 {
		w := &pieceWriter{h: http.Header{}, want: pdf}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := s.answer(w, r, pipeline.Job{}, &pipeline.Result{PDF: pdf, Pages: 1})
		runtime.ReadMemStats(&after)
		if err != nil || w.wrong || w.off != len(pdf) || w.largest > 64<<10 {
			t.Fatalf("answer: %v; wrote %d bytes of %d, intact %v, largest write %d", err, w.off, len(pdf), !w.wrong, w.largest)
		}
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	if least > 16<<10 {
		t.Fatalf("answering a %d KiB PDF allocated %d KiB; want the headers' few hundred bytes, not a copy", len(pdf)>>10, least>>10)
	}
}

// TestAnswerOutlivesWriteTimeout: a PDF answer, like a download, reaches a
// client that reads it slowly past the server's write timeout; written in
// one piece, it was cut at the timeout.
func TestAnswerOutlivesWriteTimeout(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	pdf := make([]byte, 1<<20)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.answer(w, r, pipeline.Job{}, &pipeline.Result{PDF: pdf, Pages: 1})
	}))
	// Small socket buffers on both ends, so that the PDF waits on the reader
	// rather than sitting in the kernel.
	srv.Listener = smallBuffers{srv.Listener}
	srv.Config.WriteTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			_ = c.(*net.TCPConn).SetReadBuffer(16 << 10)
		}
		return c, err
	}}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, buf := 0, make([]byte, 256<<10)
	for {
		time.Sleep(20 * time.Millisecond) // past the write timeout
		n, err := resp.Body.Read(buf)
		got += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read %d of %d bytes: %v", got, len(pdf), err)
		}
	}
	if got != len(pdf) {
		t.Fatalf("read %d of %d bytes", got, len(pdf))
	}
}

// smallBuffers gives accepted connections a small send buffer.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		_ = c.(*net.TCPConn).SetWriteBuffer(16 << 10)
	}
	return c, err
}

// TestDownloadDeadline: a download may pause up to a minute between
// pieces, and past its first minute must keep 16 KiB/s on average, so a
// few slow readers cannot hold every download place for hours.
func TestDownloadDeadline(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	// Early on, a minute from now.
	if got := downloadDeadline(start, start.Add(time.Second), 64<<10); !got.Equal(start.Add(61 * time.Second)) {
		t.Errorf("early: %v", got.Sub(start))
	}
	// Ten minutes in with 1 MiB sent (1.7 KiB/s): due a minute plus 64 s
	// after the start, long past: the write fails at once.
	if got := downloadDeadline(start, start.Add(10*time.Minute), 1<<20); !got.Equal(start.Add(time.Minute + 64*time.Second)) {
		t.Errorf("slow reader: %v", got.Sub(start))
	}
	// 50 MB at a good rate: only the stall bound applies.
	now := start.Add(10 * time.Minute)
	if got := downloadDeadline(start, now, 50<<20); !got.Equal(now.Add(time.Minute)) {
		t.Errorf("fast reader: %v", got.Sub(now))
	}
}

// TestClientAddr: the address the per-address bounds count, directly and
// behind trusted proxies, whose X-Forwarded-For is read from the right.
func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	for _, tt := range []struct {
		name, remote string
		xff          []string
		trusted      []netip.Prefix
		want         string
	}{
		{"direct", "192.0.2.1:1234", nil, nil, "192.0.2.1"},
		{"ipv6 by its /64", "[2001:db8::1]:1234", nil, nil, "2001:db8::/64"},
		{"mapped ipv4", "[::ffff:192.0.2.1]:1234", nil, nil, "192.0.2.1"},
		{"header ignored without trusted proxies", "192.0.2.1:1234", []string{"198.51.100.7"}, nil, "192.0.2.1"},
		{"header ignored from an untrusted peer", "192.0.2.1:1234", []string{"198.51.100.7"}, trusted, "192.0.2.1"},
		{"behind a trusted proxy", "10.1.2.3:1234", []string{"198.51.100.7"}, trusted, "198.51.100.7"},
		{"client's own claim to the left", "10.1.2.3:1234", []string{"203.0.113.9, 198.51.100.7"}, trusted, "198.51.100.7"},
		{"two trusted hops", "10.1.2.3:1234", []string{"198.51.100.7, 10.9.9.9"}, trusted, "198.51.100.7"},
		{"several header lines", "10.1.2.3:1234", []string{"203.0.113.9", "198.51.100.7, 10.9.9.9"}, trusted, "198.51.100.7"},
		{"ipv6 client behind a proxy", "[fd00::1]:1234", []string{"2001:db8:1:2::5"}, trusted, "2001:db8:1:2::/64"},
		{"no header: the proxy", "10.1.2.3:1234", nil, trusted, "10.1.2.3"},
		{"malformed: the last good hop", "10.1.2.3:1234", []string{"198.51.100.7, junk, 10.9.9.9"}, trusted, "10.9.9.9"},
		{"only proxies", "10.1.2.3:1234", []string{"10.8.8.8"}, trusted, "10.8.8.8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/v1/files/x", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := clientAddr(r, tt.trusted); got != tt.want {
				t.Fatalf("clientAddr = %q, want %q", got, tt.want)
			}
		})
	}
}
