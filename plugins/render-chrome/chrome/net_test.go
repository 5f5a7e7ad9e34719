package chrome

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
)

// publicIP is what the test resolver answers for public.test; the test
// dialer sends it to a loopback server, so remote fetching can be tested
// without leaving the machine.
const publicIP = "93.184.215.14"

// testNet is a public-looking server, a private one that no document may
// reach, and the resolver and dialer that make the first look public.
type testNet struct {
	public  *httptest.Server
	private *httptest.Server

	privateConns atomic.Int64 // connections the private server accepted
	privateHits  atomic.Int64 // requests it answered
	publicHits   atomic.Int64
	strayDials   atomic.Int64 // dials to anything but publicIP

	stallOnce sync.Once
	stall     chan struct{} // /stall answers when this closes
	stalled   chan struct{} // receives when /stall is entered
}

func newTestNet(t *testing.T) *testNet {
	t.Helper()
	n := &testNet{stall: make(chan struct{}), stalled: make(chan struct{}, 16)}
	n.private = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.privateHits.Add(1)
		_, _ = w.Write([]byte("root:x:0:0:root:/root:/bin/bash"))
	}))
	n.private.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.privateConns.Add(1)
		}
	}
	n.private.Start()
	t.Cleanup(n.private.Close)

	mux := http.NewServeMux()
	mux.HandleFunc("/ok.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		_, _ = w.Write([]byte(".remote { color: #00ff00; font-size: 40pt }"))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, n.private.URL+"/via-redirect", http.StatusFound)
	})
	mux.HandleFunc("/chain", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/chain2", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/chain2", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://0x7f000001:"+n.privatePort()+"/via-chain", http.StatusTemporaryRedirect)
	})
	// Held until release, or until the render's remoteTimeout (10 s by
	// default) gives up on it: a test whose setup may take that long on a
	// loaded machine, and needs the image held past it, sets a longer one.
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		n.stalled <- struct{}{}
		select {
		case <-n.stall:
		case <-r.Context().Done():
		}
	})
	n.public = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.publicHits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(n.public.Close)
	t.Cleanup(n.release)
	return n
}

func (n *testNet) release() { n.stallOnce.Do(func() { close(n.stall) }) }

func (n *testNet) privatePort() string {
	_, port, _ := net.SplitHostPort(n.private.Listener.Addr().String())
	return port
}

func (n *testNet) publicURL() string {
	_, port, _ := net.SplitHostPort(n.public.Listener.Addr().String())
	return "http://public.test:" + port
}

func (n *testNet) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	switch host {
	case "public.test":
		return []netip.Addr{netip.MustParseAddr(publicIP)}, nil
	case "localhost":
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}, nil
	}
	return nil, errors.New("no such host")
}

func (n *testNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, _ := net.SplitHostPort(addr)
	if host != publicIP {
		n.strayDials.Add(1)
		return nil, errors.New("test dialer: only the public test address may be dialled")
	}
	var d net.Dialer
	return d.DialContext(ctx, network, n.public.Listener.Addr().String())
}

func (n *testNet) options() []Option {
	return []Option{WithLookup(n.lookup), WithDial(n.dial)}
}
