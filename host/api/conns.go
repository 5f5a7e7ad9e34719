package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mdpress/mdpress/core/apierr"
)

// DefaultMaxConnections is the default bound of open client connections:
// at about 25 KiB each while idle, 100 MiB, far more than the
// conversions, queue places and downloads that can use them at once.
const DefaultMaxConnections = 4096

// ConnLimit bounds the client connections open at once. Without a bound,
// a client that opened connections and sent one request on each kept them
// for the idle timeout (two minutes) at no cost, until the process ran out
// of file descriptors: from then on the server accepted nothing, /healthz
// and every other client's conversion included, and logged "too many open
// files" every second. At the bound, a new connection closes the one idle
// the longest (its client, between requests, opens another when it needs
// one), and when none is idle it is answered 503 with Retry-After and
// closed.
type ConnLimit struct {
	max int

	refusing chan struct{} // connections being answered 503

	mu   sync.Mutex
	open int
	idle map[net.Conn]time.Time // since when each idle connection is
}

// maxRefusing bounds the connections past the bound being answered at
// once; the others are closed unanswered.
const maxRefusing = 64

// NewConnLimit bounds the connections a server accepts to max.
func NewConnLimit(max int) *ConnLimit {
	return &ConnLimit{max: max, idle: make(map[net.Conn]time.Time), refusing: make(chan struct{}, maxRefusing)}
}

// Listener wraps ln; the server that serves it must report its
// connections' states to ConnState.
func (l *ConnLimit) Listener(ln net.Listener) net.Listener { return &limitListener{Listener: ln, l: l} }

// ConnState is the http.Server's ConnState hook: idle connections are the
// ones that may be closed to make room.
func (l *ConnLimit) ConnState(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st == http.StateIdle {
		l.idle[c] = time.Now()
	} else {
		delete(l.idle, c)
	}
}

// admit counts a new connection if there is room, making room by closing
// the connection idle the longest if need be.
func (l *ConnLimit) admit() bool {
	l.mu.Lock()
	if l.open < l.max {
		l.open++
		l.mu.Unlock()
		return true
	}
	var oldest net.Conn
	var since time.Time
	for c, t := range l.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	if oldest == nil {
		l.mu.Unlock()
		return false
	}
	// The closed connection gives its place to this one: counted here,
	// not again when its Close comes back.
	delete(l.idle, oldest)
	oldest.(*limitConn).given = true
	l.mu.Unlock()
	_ = oldest.Close()
	return true
}

func (l *ConnLimit) done(c *limitConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.idle, c)
	if !c.given {
		l.open--
	}
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
		if ll.l.admit() {
			return &limitConn{Conn: c, l: ll.l}, nil
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
	_ = c.SetDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 4096)
	var got []byte
	for !bytes.Contains(got, []byte("\r\n\r\n")) && len(got) < 64<<10 {
		n, err := c.Read(buf)
		got = append(got[max(0, len(got)-3):], buf[:n]...)
		if err != nil {
			break
		}
	}
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
	once  sync.Once
	given bool // under l.mu: its place went to another connection
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.done(c) })
	return err
}
