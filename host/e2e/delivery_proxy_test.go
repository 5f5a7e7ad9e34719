package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/config"
	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestDeliveryBehindProxy: behind a reverse proxy every download comes
// from the proxy's address. With the proxy in server.trustedProxies, the
// per-address bound of 8 downloads at once counts the clients its
// X-Forwarded-For names, so nine clients each stream one; without it, the
// header is the client's word and counts for nothing.
func TestDeliveryBehindProxy(t *testing.T) {
	pdfcheck.Require(t)
	// Larger than what the socket buffers take, so that an unread
	// download holds its place.
	pdf := bigPDF(16<<20, "Behind a proxy")
	for _, tt := range []struct {
		name    string
		trusted []string
		want429 bool
	}{
		{"trusted", []string{"127.0.0.0/8"}, false},
		{"not trusted", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			id := storeDirect(t, dir, pdf)
			h := startHost(t, fpdf(), withDataDir(dir), writeConfig(t, func(c *config.Config) {
				c.Server.TrustedProxies = tt.trusted
			}))
			u, err := url.Parse(h.URL + "/v1/files/" + id)
			if err != nil {
				t.Fatal(err)
			}
			statuses := map[int]int{}
			for i := range 9 {
				statuses[stalledDownload(t, u, fmt.Sprintf("198.51.100.%d", i+1))]++
			}
			if tt.want429 && (statuses[http.StatusOK] != 8 || statuses[http.StatusTooManyRequests] != 1) {
				t.Fatalf("statuses %v: want 8 downloads and one 429, the header ignored", statuses)
			}
			if !tt.want429 && statuses[http.StatusOK] != 9 {
				t.Fatalf("statuses %v: nine clients behind one proxy, want nine downloads", statuses)
			}
		})
	}
}

// stalledDownload starts a GET of u as if forwarded for client, reads the
// status line and then nothing more, so that the download keeps its place
// until the test ends. It returns the status.
func stalledDownload(t *testing.T, u *url.URL, client string) int {
	t.Helper()
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nX-Forwarded-For: %s\r\n\r\n", u.Path, u.Host, client)
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReaderSize(c, 4096), nil)
	if err != nil {
		t.Fatalf("download for %s: %v", client, err)
	}
	return resp.StatusCode
}
