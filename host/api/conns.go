package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdpress/mdpress/core/apierr"
	"github.com/mdpress/mdpress/host/metrics"
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

	metrics *metrics.Metrics // nil: none kept
	log     *slog.Logger
	shed    map[string]int // connections closed at the bound since the last warning, by reason
	warned  time.Time      // when the last warning was logged
}

// shedLogEvery spaces the warnings that the bound is acting: one a
// connection would flood the log just when the server is under pressure.
const shedLogEvery = 30 * time.Second

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

// WithMetrics keeps the connections' figures, and those closed at the
// bound, in m.
func WithMetrics(m *metrics.Metrics) ConnOption {
	return func(l *ConnLimit) { l.metrics = m }
}

// WithLogger warns on log, at most once every 30 s, that connections are
// being closed at the bound.
func WithLogger(log *slog.Logger) ConnOption {
	return func(l *ConnLimit) { l.log = log }
}

// NewConnLimit bounds the connections a server accepts to max.
func NewConnLimit(max int, opts ...ConnOption) *ConnLimit {
	l := &ConnLimit{max: max, perAddr: DefaultSendingPerAddress, refusing: make(chan struct{}, maxRefusing),
		idle: make(map[*limitConn]time.Time), sending: make(map[*limitConn]struct{}), sendingBy: make(map[string]int),
		log: slog.New(slog.DiscardHandler), shed: make(map[string]int)}
	for _, o := range opts {
		o(l)
	}
	l.report()
	return l
}

// report updates the connection gauges. Under l.mu.
func (l *ConnLimit) report() {
	if l.metrics != nil {
		l.metrics.Connections(l.max, l.open, len(l.sending))
	}
}

// closedAt counts a connection closed at the bound for reason (a
// metrics.Conn constant) and returns the warning to log once l.mu is
// released, nil when one was logged less than shedLogEvery ago. Under l.mu.
func (l *ConnLimit) closedAt(reason string, now time.Time) func() {
	if l.metrics != nil {
		l.metrics.ConnectionClosed(reason)
	}
	l.shed[reason]++
	if !l.warned.IsZero() && now.Sub(l.warned) < shedLogEvery {
		return nil
	}
	// The address holding most connections still sending: the one to
	// look at first when the bound is reached by a client holding places.
	top, held := "", 0
	for p, n := range l.sendingBy {
		if n > held {
			top, held = p, n
		}
	}
	attrs := []any{"maxConnections", l.max, "open", l.open, "sending", len(l.sending),
		"topSender", top, "topSending", held}
	if !l.warned.IsZero() {
		attrs = append(attrs, "since", now.Sub(l.warned).Round(time.Second))
	}
	attrs = append(attrs, "idleClosed", l.shed[metrics.ConnIdle], "overShareClosed", l.shed[metrics.ConnOverShare],
		"slowClosed", l.shed[metrics.ConnSlow], "refused", l.shed[metrics.ConnRefused], "dropped", l.shed[metrics.ConnDropped])
	l.warned = now
	clear(l.shed)
	return func() {
		l.log.Warn("connection bound reached: connections closed to make room or refused (counts since the last such line)", attrs...)
	}
}

// turnedAway counts a new connection past the bound that is refused for
// reason, and warns of it (see closedAt).
func (l *ConnLimit) turnedAway(reason string) {
	l.mu.Lock()
	warn := l.closedAt(reason, time.Now())
	l.mu.Unlock()
	if warn != nil {
		warn()
	}
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

// faultyFramingRoute is the route label of the requests refused for their
// framing: they reach no route, and an operator counting smuggling
// attempts tells them from other unmatched ones.
const faultyFramingRoute = "faulty_framing"

// Handler marks a request's connection as done sending once the handler
// has read its body to the end, or at once when it has none. A body the
// handler leaves unread, the server reads or cuts after the answer: the
// connection counts as sending until it is idle.
//
// A request whose framing is faulty (see framer) is answered 400 and its
// connection closed, before next sees it; it is counted in the HTTP
// metrics under the route faultyFramingRoute, since no route matched it.
func (l *ConnLimit) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(*limitConn); ok {
			if c.frames.faultyAt(c.served.Add(1)) {
				start := time.Now()
				l.log.Info("request with faulty framing refused, its connection closed",
					"peer", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
				if l.metrics != nil {
					defer func() { l.metrics.ObserveHTTP(faultyFramingRoute, http.StatusBadRequest, time.Since(start)) }()
				}
				w.Header().Set("Connection", "close")
				writeError(w, apierr.New(http.StatusBadRequest, apierr.NameInvalidRequest,
					"the request has both Transfer-Encoding and Content-Length, or Transfer-Encoding in HTTP/1.0: its length is ambiguous").
					WithHint("send either Content-Length or Transfer-Encoding: chunked, not both"))
				return
			}
			if r.Body == nil || r.Body == http.NoBody {
				l.sent(c)
			} else {
				// On a copy of the request: the server finishes a request
				// whose body the handler left unread by its own request's
				// body, answering at once one that awaits a 100 Continue
				// or is large. Wrapped in place, a refusal (a bad key, say)
				// waited for the client to send up to 256 KiB first, and
				// a client that had asked to continue sent nothing until
				// its own timeout (curl's: a second).
				r = r.WithContext(r.Context())
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
	l.report()
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
	l.report()
}

// admit counts a new connection if there is room, making room if need be
// (see ConnLimit), and reports false when there is none.
func (l *ConnLimit) admit(c *limitConn) bool {
	l.mu.Lock()
	if l.open < l.max {
		l.open++
		l.send(c, time.Now())
		l.report()
		l.mu.Unlock()
		return true
	}
	now := time.Now()
	victim, reason := l.oversending(c.peer), metrics.ConnOverShare
	if victim == nil {
		victim, reason = l.idlest(), metrics.ConnIdle
	}
	if victim == nil {
		victim, reason = l.slowest(now), metrics.ConnSlow
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
	warn := l.closedAt(reason, now)
	l.report()
	l.mu.Unlock()
	_ = victim.Close()
	if warn != nil {
		warn()
	}
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
// bytes a second over its last sendGrace (see recentRate) gives its
// connection's place to a new connection at the bound. Many addresses,
// each within its share, could otherwise still hold every place, each
// reopening the connections the read timeouts cut. A client sends its
// headers at once and a body at the pace of its link: well above this even
// on a slow mobile one, and a full-size body at the rate takes longer than
// the read timeout allows anyway.
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
		rate, ok := c.recentRate(now)
		if ok && rate < minSendRate && (slow == nil || rate < slowRate) {
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
	l.report()
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
			ll.l.turnedAway(metrics.ConnRefused)
			go func() {
				defer func() { <-ll.l.refusing }()
				refuse(c)
			}()
		default:
			ll.l.turnedAway(metrics.ConnDropped)
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
	markMu     sync.Mutex
	marks      [2]readMark  // under markMu: the older first
	lastRead   time.Time    // under markMu: when bytes last came
	frames     framer       // the framing of the requests read
	served     atomic.Int64 // requests handed to Handler
}

// readMark is how many bytes a connection had read at a moment. Read
// takes one at most every markEvery, so that the newer of the last two
// that is at least sendGrace old starts a window of sendGrace to
// sendGrace+markEvery ending now. Bytes read up to markEvery after the
// mark count in that window, which only lastRead tells apart from bytes
// still coming.
type readMark struct {
	at   time.Time
	read int64
}

const markEvery = time.Second

func (c *limitConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	read := c.read.Add(int64(n))
	if n > 0 {
		c.frames.read(p[:n])
		now := time.Now()
		c.markMu.Lock()
		c.lastRead = now
		if now.Sub(c.marks[1].at) >= markEvery {
			c.marks[0], c.marks[1] = c.marks[1], readMark{at: now, read: read}
		}
		c.markMu.Unlock()
	}
	return n, err
}

// recentRate is the bytes a second c's request has come at over its last
// sendGrace or a little more (see readMark), or from its start when no
// mark of it is old enough; false while it is younger than sendGrace.
// Averaged from the start, a request whose first 60 KB came at once and
// then nothing kept its place for a minute, up to the read timeout, as
// though it were still coming. Under l.mu.
func (c *limitConn) recentRate(now time.Time) (float64, bool) {
	if now.Sub(c.since) < sendGrace {
		return 0, false
	}
	from := readMark{at: c.since, read: c.readBefore}
	c.markMu.Lock()
	defer c.markMu.Unlock()
	if now.Sub(c.lastRead) >= sendGrace {
		return 0, true // nothing for sendGrace: stalled, or never begun
	}
	for _, m := range c.marks {
		if !m.at.Before(c.since) && now.Sub(m.at) >= sendGrace {
			from = m
		}
	}
	return float64(c.read.Load()-from.read) / now.Sub(from.at).Seconds(), true
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
