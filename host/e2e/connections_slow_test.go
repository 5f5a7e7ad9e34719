package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/config"
)

// dialFrom dials h from a loopback address of its own: a client address
// other than 127.0.0.1.
func dialFrom(h *host, from string) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	return d.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
}

// clientFrom is an HTTP client whose connections come from the address from.
func clientFrom(from string) *http.Client {
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// trickle keeps n connections from the address from sending a request a
// byte every 100 ms, opening a new one for each the server closes, as a
// slowloris client does, until the test ends; start is what each
// connection opens with.
func trickle(t *testing.T, h *host, from string, n int, start string) {
	t.Helper()
	conns := make([]net.Conn, n)
	open := func(i int) {
		c, err := dialFrom(h, from)
		if err != nil {
			return
		}
		conns[i] = c
		_, _ = io.WriteString(c, start)
	}
	for i := range conns {
		open(i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 512)
		for ctx.Err() == nil {
			for i, c := range conns {
				if c != nil {
					_, err := c.Write([]byte("a"))
					if err == nil {
						_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
						var n int
						n, err = c.Read(buf)
						if n > 0 && err == nil {
							err = io.EOF // answered (a 503 or a timeout's 408): over
						}
					}
					if ne, ok := err.(net.Error); ok && ne.Timeout() {
						continue // still open, nothing to read
					}
					c.Close()
				}
				open(i)
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
}

// TestConnectionsTrickled: connections still sending their request are
// not idle, so one address that trickled the headers or the bodies of as
// many connections as server.maxConnections, reopening each one closed,
// held every place, and every other client got 503s for as long as it
// went on. At the bound an address keeps server.maxSendingPerAddress
// connections still sending; past that its longest sending one gives its
// place. Trickled from many addresses, each within its share, a request
// coming at less than 1 KiB/s past its first 2 s gives its place. Other
// clients, ordinary clients from a trickling address and several at once
// from one address are served; a trusted proxy's connections, which carry
// many clients, keep their places while they send at a client's pace.
func TestConnectionsTrickled(t *testing.T) {
	const bound, share = 20, 4
	served := func(t *testing.T, h *host, key, from string, n int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, 2*n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := clientFrom(from)
				resp, err := client.Get(h.URL + "/healthz")
				if err != nil {
					errs <- fmt.Errorf("/healthz from %s: %v", from, err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("/healthz from %s: %d, want 200", from, resp.StatusCode)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				o := call(ctx, client, h.URL, key, map[string]string{"markdown": fmt.Sprintf("# Client %d", i)}, nil)
				if o.err != nil || o.status != 200 || !isPDF(o.body) {
					errs <- fmt.Errorf("a conversion from %s: %d %v", from, o.status, o.err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
	for _, tc := range []struct {
		name  string
		start func(key string) string
	}{
		{"headers", func(string) string { return "GET /healthz HTTP/1.1\r\nHost: mdpress\r\nX-Slow: " }},
		{"body", func(key string) string {
			return "POST /v1/pdf/markdown HTTP/1.1\r\nHost: mdpress\r\nAuthorization: Bearer " + key +
				"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"markdown\": \""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) {
				c.Server.MaxConnections = bound
				c.Server.MaxSendingPerAddress = share
			}))
			_, key := h.account("pro", 1000)
			trickle(t, h, "127.0.0.1", bound, tc.start(key))
			time.Sleep(300 * time.Millisecond) // accepted
			for range 3 {
				served(t, h, key, "127.0.0.2", 1)
				time.Sleep(300 * time.Millisecond) // the trickler reopens what it lost
			}
			served(t, h, key, "127.0.0.3", 3) // several behind one NAT
			served(t, h, key, "127.0.0.1", 2) // beside the trickler, from its address
		})
	}
	// Each address within its share, so only the rate tells the
	// tricklers from clients.
	t.Run("many addresses", func(t *testing.T) {
		h := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) {
			c.Server.MaxConnections = bound
			c.Server.MaxSendingPerAddress = share
		}))
		_, key := h.account("pro", 1000)
		for i := range bound {
			trickle(t, h, fmt.Sprintf("127.0.2.%d", i+1), 1, "GET /healthz HTTP/1.1\r\nHost: mdpress\r\nX-Slow: ")
		}
		time.Sleep(2500 * time.Millisecond) // past the grace a request has to get going
		for range 3 {
			served(t, h, key, "127.0.0.2", 1)
			time.Sleep(300 * time.Millisecond)
		}
		served(t, h, key, "127.0.0.3", 3)
	})
	t.Run("trusted proxy", func(t *testing.T) {
		h := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) {
			c.Server.MaxConnections = bound
			c.Server.MaxSendingPerAddress = share
			c.Server.TrustedProxies = []string{"127.0.0.4"}
		}))
		settled()
		var slow []net.Conn
		for range bound {
			c, err := dialFrom(h, "127.0.0.4")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: mdpress\r\n") // its clients' requests, still coming
			slow = append(slow, c)
		}
		time.Sleep(200 * time.Millisecond)
		resp, err := clientFrom("127.0.0.2").Get(h.URL + "/healthz")
		if err != nil {
			t.Fatalf("a connection past the bound: %v, want a 503", err)
		}
		resp.Body.Close()
		if resp.StatusCode != 503 {
			t.Fatalf("a connection past the bound beside a trusted proxy's: %d, want 503 (the proxy's connections keep their places)", resp.StatusCode)
		}
		for _, c := range slow {
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			if _, err := c.Read(make([]byte, 1)); err == io.EOF {
				t.Fatal("a trusted proxy's connection was closed")
			}
		}
	})
}

// TestConnectionsStalled: at server.maxConnections, a request's rate was
// averaged from its start, so clients whose first 60 KB came at once and
// then nothing held their places for a minute, until the read timeout,
// and every other client got 503s meanwhile. The rate is now measured over
// the request's last 2-3 s: a stalled request gives its place, one still
// coming at a slow link's pace keeps it.
func TestConnectionsStalled(t *testing.T) {
	const bound = 20
	h := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) { c.Server.MaxConnections = bound }))
	_, key := h.account("pro", 10)
	settled()
	head := "POST /v1/pdf/markdown HTTP/1.1\r\nHost: mdpress\r\nAuthorization: Bearer " + key +
		"\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n{\"markdown\": \"" + strings.Repeat("a", 60000)
	var conns []net.Conn
	for i := range bound {
		c, err := dialFrom(h, fmt.Sprintf("127.0.6.%d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// The first goes on at 4 KiB/s, a slow upload; the others stall.
	steady := conns[0]
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := io.WriteString(steady, strings.Repeat("a", 400)); err != nil {
				return
			}
		}
	}()
	time.Sleep(4 * time.Second) // well past the 2 s, but 60 KB in 4 s is 15 KB/s on average
	for i := range 3 {
		resp, err := clientFrom("127.0.0.2").Get(h.URL + "/healthz")
		if err != nil {
			t.Fatalf("/healthz %d beside stalled requests: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("/healthz %d beside stalled requests: %d, want 200", i, resp.StatusCode)
		}
	}
	_ = steady.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := steady.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the request still coming at 4 KiB/s lost its connection: %v", err)
	}
}
