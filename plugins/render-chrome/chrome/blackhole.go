package chrome

import (
	"errors"
	"net"
	"sync/atomic"
)

// blackhole is the proxy the browser is told to use. It closes every
// connection unread, so a request that escaped Fetch interception reaches
// nothing; the count says how often that happened.
type blackhole struct {
	ln    net.Listener
	conns atomic.Int64
}

func newBlackhole() (*blackhole, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &blackhole{ln: ln}
	go b.serve()
	return b, nil
}

func (b *blackhole) addr() string { return b.ln.Addr().String() }

func (b *blackhole) serve() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		b.conns.Add(1)
		_ = c.Close()
	}
}

func (b *blackhole) close() { _ = b.ln.Close() }
