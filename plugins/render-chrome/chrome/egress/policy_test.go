package egress

import (
	"errors"
	"net/netip"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		addr  string
		allow bool
	}{
		{"93.184.215.14", true},
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"2606:4700:4700::1111", true},
		{"2a00:1450:4001:82a::200e", true},

		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"10.0.0.1", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"169.254.0.1", false},
		{"100.64.0.1", false},
		{"100.127.255.255", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"255.255.255.255", false},
		{"198.18.0.1", false},
		{"192.0.0.8", false},
		{"::", false},
		{"::1", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"fc00::1", false},
		{"fd12:3456::1", false},
		{"ff02::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.1.2.3", false},
		{"::ffff:169.254.169.254", false},
		{"::127.0.0.1", false},
		{"::7f00:1", false},
		{"::ffff:0:7f00:1", false},
		{"::ffff:0:808:808", false},
		{"64:ff9b::7f00:1", false},
		{"64:ff9b::808:808", false},
		{"2002:7f00:1::", false},
		{"2001:db8::1", false},
		{"2001::1", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := Check(netip.MustParseAddr(tt.addr))
			if tt.allow && err != nil {
				t.Fatalf("Check(%s) = %v, want allowed", tt.addr, err)
			}
			if !tt.allow && !errors.Is(err, ErrDenied) {
				t.Fatalf("Check(%s) = %v, want ErrDenied", tt.addr, err)
			}
		})
	}
	if err := Check(netip.Addr{}); !errors.Is(err, ErrDenied) {
		t.Fatalf("Check(zero) = %v, want ErrDenied", err)
	}
}

func TestParseHost(t *testing.T) {
	tests := []struct {
		host string
		want string // "" means not a literal
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"[::1]", "::1"},
		{"[::ffff:127.0.0.1]", "::ffff:127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F000001", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0", "0.0.0.0"},
		{"169.254.169.254.", "169.254.169.254"},
		{"example.com", ""},
		{"localhost", ""},
		{"1.2.3.4.5", ""},
		{"256.1.1.1", ""},
		{"4294967296", ""},
		{"09.1.1.1", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			got, ok := ParseHost(tt.host)
			if tt.want == "" {
				if ok {
					t.Fatalf("ParseHost(%q) = %s, want no literal", tt.host, got)
				}
				return
			}
			if !ok || got != netip.MustParseAddr(tt.want) {
				t.Fatalf("ParseHost(%q) = %s, %v; want %s", tt.host, got, ok, tt.want)
			}
		})
	}
}
