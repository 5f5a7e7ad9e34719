package api

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
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

// enter takes a place for a download to the client at addr (see
// clientAddr), or reports that there is none.
func (d *downloads) enter(addr string) (release func(), ok bool) {
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
//
// A request from one of the trusted proxies comes from the last address
// of its X-Forwarded-For that is not one of them: behind a reverse proxy
// or load balancer every client had the proxy's address, so eight slow
// downloads anywhere answered everyone else's 429. The header is read
// from the right, as each proxy appends the peer it saw; what a client
// wrote to the left of that is its own claim and never counts.
func clientAddr(r *http.Request, trusted []netip.Prefix) string {
	ip, ok := clientIP(r, trusted)
	if !ok {
		return remoteHost(r)
	}
	return addrKey(ip)
}

// addrKey is the unit a client address counts as: an IPv4 address, or an
// IPv6 address's /64.
func addrKey(ip netip.Addr) string {
	if ip.Is4() {
		return ip.String()
	}
	block, _ := ip.WithZone("").Prefix(64)
	return block.String()
}

// clientIP is the address a request came from, through the trusted
// proxies as clientAddr says; false when the peer's address is not an IP
// (a Unix socket's).
func clientIP(r *http.Request, trusted []netip.Prefix) (netip.Addr, bool) {
	ip, err := netip.ParseAddr(remoteHost(r))
	if err != nil {
		return netip.Addr{}, false
	}
	ip = ip.Unmap()
	if len(trusted) > 0 && isTrusted(ip, trusted) {
		ip = forwardedFor(r.Header.Values("X-Forwarded-For"), ip, trusted)
	}
	return ip, true
}

// remoteHost is the peer's address without its port.
func remoteHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// forwardedFor walks the X-Forwarded-For values from the right past the
// trusted proxies and returns the first address that is not one: the
// client as the outermost trusted proxy saw it. A malformed entry ends the
// walk at the last address known good, as does a list of proxies only.
func forwardedFor(values []string, peer netip.Addr, trusted []netip.Prefix) netip.Addr {
	client := peer
	for i := len(values) - 1; i >= 0; i-- {
		hops := strings.Split(values[i], ",")
		for j := len(hops) - 1; j >= 0; j-- {
			ip, err := netip.ParseAddr(strings.TrimSpace(hops[j]))
			if err != nil {
				return client
			}
			client = ip.Unmap()
			if !isTrusted(client, trusted) {
				return client
			}
		}
	}
	return client
}

func isTrusted(ip netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(ip.WithZone("")) {
			return true
		}
	}
	return false
}
