package api

import (
	"net"
	"net/http"
	"net/netip"
	"sync"
)

// downloadsPerAddress bounds the hosted-file downloads one client address
// streams at once: a browser needs one or two, a download manager a few.
const downloadsPerAddress = 8

// downloads bounds the hosted-file downloads streaming at once, in all and
// per client address. A download that its client does not read holds
// about 8 MiB between the host and the sink (a chunk in each, the gRPC
// window, a message waiting to send) until its write deadline; without a
// bound, a few hundred stalled sockets held gigabytes.
type downloads struct {
	mu     sync.Mutex
	max    int
	total  int
	byAddr map[string]int
}

func newDownloads(max int) *downloads {
	return &downloads{max: max, byAddr: map[string]int{}}
}

// enter takes a place for r's download, or reports that there is none.
func (d *downloads) enter(r *http.Request) (release func(), ok bool) {
	addr := clientAddr(r)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.total >= d.max || d.byAddr[addr] >= downloadsPerAddress {
		return nil, false
	}
	d.total++
	d.byAddr[addr]++
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.total--
		if d.byAddr[addr]--; d.byAddr[addr] == 0 {
			delete(d.byAddr, addr)
		}
	}, true
}

// clientAddr is the address a request came from, without its port: the
// unit of the per-address bounds (downloads, sign-ups). An IPv6 client is
// its /64, the least a network gives one host: counted by its whole
// address, a client took a fresh one of its 2^64 for every sign-up, each
// an account with the plan's free credits.
func clientAddr(r *http.Request) string {
	addr, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		addr = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	if ip = ip.Unmap(); ip.Is4() {
		return ip.String()
	}
	block, _ := ip.WithZone("").Prefix(64)
	return block.String()
}
