package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/config"
)

// openIdle opens n connections to h, each idle after one /healthz, as a
// client that keeps its connections alive leaves them.
func openIdle(t *testing.T, h *host, n int) []net.Conn {
	t.Helper()
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(h.URL, "http://"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: mdpress\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Logf("connection %d unanswered: %v", len(conns), err)
			break // the server accepts no more
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return conns
}

// settled waits for the host to see the end of startHost's /readyz
// connection: until then it holds a place, and when it ends, after the
// slow connections took the others, its place went to the connection
// expected to find none.
func settled() { time.Sleep(300 * time.Millisecond) }

// TestConnectionsLeftOpen: connections that clients keep alive and idle
// took a file descriptor each for the idle timeout (two minutes); past
// the open-file limit the server accepted nothing, so /healthz and every
// other client's conversion hung until the idle ones were dropped. The
// bound on connections, lowered to fit the limit, closes the connection
// idle longest instead.
func TestConnectionsLeftOpen(t *testing.T) {
	h := startHost(t, fpdf(), withWrap("prlimit", "--nofile=256", "--"))
	_, key := h.account("pro", 100)
	openIdle(t, h, 400)

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(h.URL + "/healthz")
	if err != nil {
		t.Fatalf("/healthz beside 400 idle connections (open-file limit 256): %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/healthz: %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if o := call(ctx, client, h.URL, key, map[string]string{"markdown": "# Small"}, nil); o.err != nil || o.status != 200 || !isPDF(o.body) {
		t.Fatalf("a conversion beside 400 idle connections: %d %v", o.status, o.err)
	}
	if strings.Contains(h.logs.String(), "too many open files") {
		t.Fatal("the host ran out of file descriptors")
	}
}

// TestConnectionsBound: at server.maxConnections with no connection idle
// (clients still sending their headers, each from an address of its own,
// within its share, and for less than the 2 s a request has to get going),
// a new connection is answered 503 with Retry-After and the contract's
// error body, at once; once they are gone, connections are served again.
func TestConnectionsBound(t *testing.T) {
	h := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) { c.Server.MaxConnections = 20 }))
	settled()
	var slow []net.Conn
	for i := range 20 {
		c, err := dialFrom(h, fmt.Sprintf("127.0.1.%d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: mdpress\r\n") // headers never end
		slow = append(slow, c)
	}
	time.Sleep(200 * time.Millisecond) // accepted
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := client.Get(h.URL + "/healthz")
	if err != nil {
		t.Fatalf("a connection past the bound: %v, want a 503", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Fatalf("a connection past the bound: %d, want 503", resp.StatusCode)
	}
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("503 without a Retry-After in seconds: %q", resp.Header.Get("Retry-After"))
	}
	decodeError(t, resp.StatusCode, body)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the 503 took %v", took)
	}
	for _, c := range slow {
		c.Close()
	}
	time.Sleep(200 * time.Millisecond)
	resp, err = client.Get(h.URL + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/healthz once the connections closed: %v %v", resp, err)
	}
	resp.Body.Close()
}
