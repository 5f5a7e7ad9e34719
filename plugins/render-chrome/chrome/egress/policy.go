// Package egress decides which network addresses a rendered document may
// reach and fetches the resources it may, so that HTML from a client can
// never make the renderer talk to the machine it runs on, its private
// network or a cloud metadata service.
package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ErrDenied is wrapped by every refusal of the policy.
var ErrDenied = errors.New("address not allowed")

// denied lists the prefixes that are never dialled. IPv4-mapped and
// IPv4-compatible IPv6 addresses are unmapped before the check, so the IPv4
// rows cover them too.
var denied = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this network"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "IPv4-translated"}, // SIIT (RFC 2765): a translator sends it on to the IPv4 address in it
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard"},
	{netip.MustParsePrefix("2001::/32"), "Teredo"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("2002::/16"), "6to4"},
	{netip.MustParsePrefix("fc00::/7"), "unique local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// Check returns nil when a may be dialled, and an error wrapping ErrDenied
// that says why not otherwise. Only public unicast addresses pass.
func Check(a netip.Addr) error {
	if !a.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrDenied)
	}
	a = a.WithZone("")
	// ::ffff:a.b.c.d and the deprecated ::a.b.c.d both reach a.b.c.d.
	if a.Is4In6() {
		a = a.Unmap()
	} else if a.Is6() && a.As16()[0] == 0 && isCompat(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	for _, d := range denied {
		if d.prefix.Contains(a) {
			return fmt.Errorf("%w: %s is %s", ErrDenied, a, d.why)
		}
	}
	return nil
}

// isCompat reports whether a is an IPv4-compatible IPv6 address ::a.b.c.d
// (the first 96 bits zero), other than :: and ::1, which the table covers.
func isCompat(a netip.Addr) bool {
	b := a.As16()
	for _, x := range b[:12] {
		if x != 0 {
			return false
		}
	}
	return a.Compare(netip.MustParseAddr("::1")) > 0
}

// ParseHost returns the address a URL host names when it is an address
// literal, including the legacy IPv4 spellings that browsers and inet_aton
// accept (0x7f000001, 2130706433, 0177.0.0.1, 127.1). ok is false for a
// host name that needs resolving.
func ParseHost(host string) (netip.Addr, bool) {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(h); err == nil {
		return a, true
	}
	return parseLegacyIPv4(strings.TrimSuffix(h, "."))
}

// parseLegacyIPv4 parses the one- to four-part numeric forms in decimal,
// octal (leading 0) or hex (leading 0x), as the WHATWG URL parser does.
func parseLegacyIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	last := len(nums) - 1
	for _, n := range nums[:last] {
		if n > 255 {
			return netip.Addr{}, false
		}
	}
	if nums[last] >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v := nums[last]
	for i, n := range nums[:last] {
		v |= n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseIPv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	n, err := strconv.ParseUint(p, base, 32)
	return n, err == nil
}
