package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdpress/mdpress/core/apierr"
)

// DefaultMaxConnections is the default bound of open client connections:
// at about 25 KiB each while idle, 100 MiB, far more than the
// conversions, queue places and downloads that can use them at once.
const DefaultMaxConnections = 4096

// DefaultSendingPerAddress is the default of the connections one client
// address keeps, at the bound, while they are still sending their request.
// A client sends its headers in one packet and a body at the pace of its
// link, so even behind a NAT few of its connections are mid-request at
// once; a client holding more at the bound is holding them, not using them.
const DefaultSendingPerAddress = 16

// ConnLimit bounds the client connections open at once. Without a bound,
// a client that opened connections and sent one request on each kept them
// for the idle timeout (two minutes) at no cost, until the process ran out
// of file descriptors: from then on the server accepted nothing, /healthz
// and every other client's conversion included, and logged "too many open
// files" every second. At the bound, a new connection takes the place of
// the connection that its client address has been sending its request on
// the longest, if that address has more than its share of connections
// still sending; otherwise of the one idle the longest (its client, between
// requests, opens another when it needs one); when none is idle it is
// answered 503 with Retry-After and closed, unless a connection has been
// sending its request too slowly (see minSendRate), which gives its place.
//
// The share matters because a connection sending its request is not idle:
// one address that trickled the headers or bodies of as many connections
// as the bound held every place until the read timeouts, reopening each
// one it lost, and every other client got 503s for as long as it kept on.
// The trusted proxies have no share: all their clients come from their
// address, and a proxy forwards requests at its own pace.
type ConnLimit struct {
	max       int
	perAddr   int
	trusted   []netip.Prefix
	refusing  chan struct{} // connections being answered 503
	mu        sync.Mutex
	open      int
	idle      map[*limitConn]time.Time // since when each idle connection is
	sending   map[*limitConn]struct{}  // connections still sending their request
	sendingBy map[string]int           // of those, how many each address holds
}

// maxRefusing bounds the connections past the bound being answered at
// once; the others are closed unanswered.
const maxRefusing = 64

// ConnOption configures a ConnLimit.
type ConnOption func(*ConnLimit)

// WithSendingPerAddress sets how many connections one client address
// keeps, at the bound, while they are still sending their request; 0:
// DefaultSendingPerAddress.
func WithSendingPerAddress(n int) ConnOption {
	return func(l *ConnLimit) {
		if n > 0 {
			l.perAddr = n
		}
	}
}

// WithTrustedProxies names the peers that have no share of sending
// connections (see ConnLimit).
func WithTrustedProxies(p []netip.Prefix) ConnOption {
	return func(l *ConnLimit) { l.trusted = p }
}

// NewConnLimit bounds the connections a server accepts to max.
func NewConnLimit(max int, opts ...ConnOption) *ConnLimit {
	l := &ConnLimit{max: max, perAddr: DefaultSendingPerAddress, refusing: make(chan struct{}, maxRefusing),
		idle: make(map[*limitConn]time.Time), sending: make(map[*limitConn]struct{}), sendingBy: make(map[string]int)}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Listener wraps ln; the server that serves it must report its
// connections' states to ConnState, take its base contexts from
// ConnContext and serve through Handler.
func (l *ConnLimit) Listener(ln net.Listener) net.Listener { return &limitListener{Listener: ln, l: l} }

type connKey struct{}

// ConnContext is the http.Server's ConnContext hook: it lets Handler find
// a request's connection.
func (l *ConnLimit) ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// Handler marks a request's connection as done sending once the handler
// has read its body to the end, or at once when it has none. A body the
// handler leaves unread, the server reads or cuts after the answer: the
// connection counts as sending until it is idle.
func (l *ConnLimit) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(*limitConn); ok {
			if r.Body == nil || r.Body == http.NoBody {
				l.sent(c)
			} else {
				r.Body = &sentBody{ReadCloser: r.Body, c: c}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// ConnState is the http.Server's ConnState hook: idle connections are the
// ones that may be closed to make room, and a connection is sending from
// its opening, or from its next request's headers, until Handler says.
// (A kept-alive connection is idle to the server until the headers of its
// next request are all in, so one trickling them is closed as idle.)
func (l *ConnLimit) ConnState(nc net.Conn, st http.ConnState) {
	c, ok := nc.(*limitConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateIdle:
		l.unsend(c)
		if !c.given { // closing already: not a place to give again
			l.idle[c] = time.Now()
		}
	case http.StateNew, http.StateActive:
		delete(l.idle, c)
		l.send(c, time.Now())
	default: // hijacked or closed
		delete(l.idle, c)
		l.unsend(c)
	}
}

// send counts c as sending since now, if it is not already. Under l.mu.
func (l *ConnLimit) send(c *limitConn, now time.Time) {
	if _, ok := l.sending[c]; ok || c.given {
		return
	}
	c.since, c.readBefore = now, c.read.Load()
	l.sending[c] = struct{}{}
	if c.peer != "" {
		l.sendingBy[c.peer]++
	}
}

// unsend counts c as no longer sending. Under l.mu.
func (l *ConnLimit) unsend(c *limitConn) {
	if _, ok := l.sending[c]; !ok {
		return
	}
	delete(l.sending, c)
	if c.peer != "" {
		if l.sendingBy[c.peer]--; l.sendingBy[c.peer] <= 0 {
			delete(l.sendingBy, c.peer)
		}
	}
}

func (l *ConnLimit) sent(c *limitConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unsend(c)
}

// admit counts a new connection if there is room, making room if need be
// (see ConnLimit), and reports false when there is none.
func (l *ConnLimit) admit(c *limitConn) bool {
	l.mu.Lock()
	if l.open < l.max {
		l.open++
		l.send(c, time.Now())
		l.mu.Unlock()
		return true
	}
	now := time.Now()
	victim := l.oversending(c.peer)
	if victim == nil {
		victim = l.idlest()
	}
	if victim == nil {
		victim = l.slowest(now)
	}
	if victim == nil {
		l.mu.Unlock()
		return false
	}
	// The closed connection gives its place to this one: counted here,
	// not again when its Close comes back.
	delete(l.idle, victim)
	l.unsend(victim)
	victim.given = true
	l.send(c, now)
	l.mu.Unlock()
	_ = victim.Close()
	return true
}

// oversending is the connection sending the longest of the address that
// holds the most connections still sending, if that is more than its
// share (counting the new connection from peer); nil if none is. Under
// l.mu.
func (l *ConnLimit) oversending(peer string) *limitConn {
	most, held := "", 0
	for p, n := range l.sendingBy {
		if p == peer {
			n++
		}
		if n > held {
			most, held = p, n
		}
	}
	if held <= l.perAddr {
		return nil
	}
	var oldest *limitConn
	for c := range l.sending {
		if c.peer == most && (oldest == nil || c.since.Before(oldest.since)) {
			oldest = c
		}
	}
	return oldest
}

// Past its first sendGrace, a request coming at less than minSendRate
// bytes a second gives its connection's place to a new connection at the
// bound. Many addresses, each within its share, could otherwise still hold
// every place, each reopening the connections the read timeouts cut. A
// client sends its headers at once and a body at the pace of its link:
// well above this even on a slow mobile one, and a full-size body at the
// rate takes longer than the read timeout allows anyway.
const (
	sendGrace   = 2 * time.Second
	minSendRate = 1 << 10
)

// slowest is the connection sending its request at the lowest rate, if
// that is below minSendRate past sendGrace; nil if none is. Under l.mu.
func (l *ConnLimit) slowest(now time.Time) *limitConn {
	var slow *limitConn
	var slowRate float64
	for c := range l.sending {
		took := now.Sub(c.since)
		if took < sendGrace {
			continue
		}
		rate := float64(c.read.Load()-c.readBefore) / took.Seconds()
		if rate < minSendRate && (slow == nil || rate < slowRate) {
			slow, slowRate = c, rate
		}
	}
	return slow
}

// idlest is the connection idle the longest, nil if none is. Under l.mu.
func (l *ConnLimit) idlest() *limitConn {
	var oldest *limitConn
	var since time.Time
	for c, t := range l.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	return oldest
}

func (l *ConnLimit) done(c *limitConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.idle, c)
	l.unsend(c)
	if !c.given {
		l.open--
	}
}

// peerOf is the address whose share c counts against: the peer's, an
// IPv6 one by its /64 as clientAddr counts it; "" (no share) for a
// trusted proxy or a peer that is not an IP.
func (l *ConnLimit) peerOf(c net.Conn) string {
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return ""
	}
	ip := ap.Addr().Unmap()
	if isTrusted(ip, l.trusted) {
		return ""
	}
	return addrKey(ip)
}

type limitListener struct {
	net.Listener
	l *ConnLimit
}

// refused is what a connection past the bound reads before it is closed.
var refused = func() []byte {
	body, _ := json.Marshal(apierr.New(http.StatusServiceUnavailable, apierr.NameUnavailable,
		"the server has too many open connections; retry shortly").WithHint("retry after the Retry-After delay").Body)
	return fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n"+
		"Retry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}()

func (ll *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := ll.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitConn{Conn: c, l: ll.l}
		lc.peer = ll.l.peerOf(c)
		if ll.l.admit(lc) {
			return lc, nil
		}
		select {
		case ll.l.refusing <- struct{}{}:
			go func() {
				defer func() { <-ll.l.refusing }()
				refuse(c)
			}()
		default:
			_ = c.Close() // refusing as many as it may: no answer
		}
	}
}

// refuse answers a connection past the bound with the 503 once its request
// has come, or a second has passed: written before, a client's transport
// takes it for an answer to no request and fails; closed with the request
// unread, the connection is reset and the answer may be lost with it.
func refuse(c net.Conn) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 4096)
	var got []byte
	for !bytes.Contains(got, []byte("\r\n\r\n")) && len(got) < 64<<10 {
		n, err := c.Read(buf)
		got = append(got[max(0, len(got)-3):], buf[:n]...)
		if err != nil {
			break
		}
	}
	// The answer and the drain get a second of their own: on the read's
	// deadline, a client silent for that second was closed unanswered, and
	// one whose request came just after found its connection reset.
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write(refused); err != nil {
		return
	}
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}
}

// limitConn gives its place back once, when it is closed.
type limitConn struct {
	net.Conn
	l     *ConnLimit
	peer  string // see peerOf
	once  sync.Once
	given bool      // under l.mu: its place went to another connection
	since time.Time // under l.mu: since when it has been sending its request
	// read counts the bytes read from the client; readBefore, under l.mu,
	// those read before its request began.
	read       atomic.Int64
	readBefore int64
}

func (c *limitConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.done(c) })
	return err
}

// sentBody tells the ConnLimit when the request's body has been read.
type sentBody struct {
	io.ReadCloser
	c    *limitConn
	once sync.Once
}

func (b *sentBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.once.Do(func() { b.c.l.sent(b.c) })
	}
	return n, err
}
