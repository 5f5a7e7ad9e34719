package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// publicIP is what the fake resolver answers for the public-looking names;
// the fake dialer sends connections for it to a loopback test server.
const publicIP = "93.184.215.14"

type fakeNet struct {
	public  *httptest.Server // stands in for publicIP
	private *httptest.Server // must never be reached
	hits    atomic.Int64     // requests the private server saw
	dials   atomic.Int64
}

func newFakeNet(t *testing.T) *fakeNet {
	t.Helper()
	n := &fakeNet{}
	n.private = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.hits.Add(1)
		_, _ = w.Write([]byte("secret"))
	}))
	t.Cleanup(n.private.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("/ok.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		_, _ = w.Write([]byte("h1{color:red}"))
	})
	mux.HandleFunc("/to-loopback", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, n.private.URL+"/secret", http.StatusFound)
	})
	mux.HandleFunc("/to-hex-loopback", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://0x7f000001:"+portOf(n.private)+"/", http.StatusFound)
	})
	mux.HandleFunc("/to-mixed", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://mixed.test/", http.StatusFound)
	})
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ok.css", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 2048)))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	n.public = httptest.NewServer(mux)
	t.Cleanup(n.public.Close)
	return n
}

func (n *fakeNet) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	switch host {
	case "public.test":
		return []netip.Addr{netip.MustParseAddr(publicIP)}, nil
	case "mixed.test":
		return []netip.Addr{netip.MustParseAddr(publicIP), netip.MustParseAddr("10.0.0.7")}, nil
	case "rebind.test":
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	case "metadata.test":
		return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
	}
	return nil, errors.New("no such host")
}

// dial connects publicIP to the public test server and anything else to
// where it says, which the policy must have stopped before.
func (n *fakeNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n.dials.Add(1)
	host, _, _ := net.SplitHostPort(addr)
	if host == publicIP {
		addr = n.public.Listener.Addr().String()
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func TestFetch(t *testing.T) {
	n := newFakeNet(t)
	port := portOf(n.public)
	privPort := portOf(n.private)
	f := NewFetcher(n.lookup, n.dial, 1024, time.Second)
	t.Cleanup(f.CloseIdle)

	t.Run("allowed", func(t *testing.T) {
		res, err := f.Fetch(t.Context(), "http://public.test:"+port+"/ok.css")
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != 200 || string(res.Body) != "h1{color:red}" || res.ContentType != "text/css" {
			t.Fatalf("got %d %q %q", res.Status, res.ContentType, res.Body)
		}
	})
	t.Run("relative redirect", func(t *testing.T) {
		res, err := f.Fetch(t.Context(), "http://public.test:"+port+"/hop")
		if err != nil || string(res.Body) != "h1{color:red}" {
			t.Fatalf("got %v, %v", res, err)
		}
	})

	denied := []struct {
		name, url string
	}{
		{"file scheme", "file:///etc/passwd"},
		{"mixed-case file scheme", "FiLe:///etc/passwd"},
		{"ftp scheme", "ftp://public.test/x"},
		{"loopback literal", n.private.URL + "/secret"},
		{"mixed-case http loopback", "hTTp://127.0.0.1:" + privPort + "/"},
		{"mapped loopback", "http://[::ffff:127.0.0.1]:" + privPort + "/"},
		{"hex loopback", "http://0x7f000001:" + privPort + "/"},
		{"decimal loopback", "http://2130706433:" + privPort + "/"},
		{"ipv6 loopback", "http://[::1]:" + privPort + "/"},
		{"metadata literal", "http://169.254.169.254/latest/meta-data/"},
		{"name resolving to loopback", "http://rebind.test:" + privPort + "/"},
		{"name resolving to metadata", "http://metadata.test/"},
		{"credentials", "http://user:pw@public.test:" + port + "/ok.css"},
		{"redirect to loopback", "http://public.test:" + port + "/to-loopback"},
		{"redirect to hex loopback", "http://public.test:" + port + "/to-hex-loopback"},
		{"redirect to mixed answer", "http://public.test:" + port + "/to-mixed"},
	}
	for _, tt := range denied {
		t.Run(tt.name, func(t *testing.T) {
			dials := n.dials.Load()
			_, err := f.Fetch(t.Context(), tt.url)
			if !errors.Is(err, ErrDenied) {
				t.Fatalf("Fetch(%s) = %v, want ErrDenied", tt.url, err)
			}
			if strings.Contains(tt.name, "redirect") {
				dials++ // the first hop to the public server
			}
			if got := n.dials.Load(); got > dials {
				t.Fatalf("dialled %d times, want %d", got, dials)
			}
		})
	}
	if h := n.hits.Load(); h != 0 {
		t.Fatalf("private server got %d requests", h)
	}

	t.Run("unknown host", func(t *testing.T) {
		if _, err := f.Fetch(t.Context(), "http://nowhere.test/"); err == nil {
			t.Fatal("want an error")
		}
	})
	t.Run("redirect loop", func(t *testing.T) {
		if _, err := f.Fetch(t.Context(), "http://public.test:"+port+"/loop"); err == nil {
			t.Fatal("want an error")
		}
	})
	t.Run("too large", func(t *testing.T) {
		_, err := f.Fetch(t.Context(), "http://public.test:"+port+"/big")
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("got %v, want ErrTooLarge", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		fast := NewFetcher(n.lookup, n.dial, 1024, 200*time.Millisecond)
		start := time.Now()
		if _, err := fast.Fetch(t.Context(), "http://public.test:"+port+"/slow"); err == nil {
			t.Fatal("want an error")
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("took %v", d)
		}
	})
}

func portOf(s *httptest.Server) string {
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	return port
}
