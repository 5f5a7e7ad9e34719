package api

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mdpress/mdpress/host/metrics"
)

// TestCrossSiteSignupRefused tells a browser's post from another site's
// page from the dashboard's own and from clients that are not browsers.
func TestCrossSiteSignupRefused(t *testing.T) {
	for _, tt := range []struct {
		hdr   map[string]string
		cross bool
	}{
		{nil, false},
		{map[string]string{"Sec-Fetch-Site": "same-origin"}, false},
		{map[string]string{"Sec-Fetch-Site": "cross-site"}, true},
		{map[string]string{"Sec-Fetch-Site": "same-site"}, true},
		{map[string]string{"Origin": "http://mdpress.example"}, false},
		{map[string]string{"Origin": "https://evil.example"}, true},
		{map[string]string{"Origin": "null"}, true},
	} {
		r := httptest.NewRequest("POST", "http://mdpress.example/dashboard/signup", nil)
		for k, v := range tt.hdr {
			r.Header.Set(k, v)
		}
		if got := crossSite(r); got != tt.cross {
			t.Errorf("%v: cross-site %v, want %v", tt.hdr, got, tt.cross)
		}
	}
}

// TestSignupBoundPerIPv6Block: an IPv6 client is bounded by its /64, not
// by each of the addresses it can take from it.
func TestSignupBoundPerIPv6Block(t *testing.T) {
	made := 0
	s := New(Options{SignupsPerHour: 1, Signup: func(context.Context) (string, string, error) {
		made++
		return "usr_x", "mdp_x", nil
	}}, slog.New(slog.DiscardHandler), noStages{}, metrics.New(prometheus.NewRegistry()))
	for _, tt := range []struct {
		addr   string
		status int
	}{
		{"[2001:db8:1:2::1]:1234", 201},
		{"[2001:db8:1:2::2]:1234", 429},
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:1234", 429},
		{"[2001:db8:1:3::1]:1234", 201},
		{"192.0.2.1:1234", 201},
		{"[::ffff:192.0.2.1]:1234", 429},
		{"192.0.2.2:1234", 201},
	} {
		r := httptest.NewRequest("POST", "/dashboard/signup", nil)
		r.RemoteAddr = tt.addr
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != tt.status {
			t.Errorf("sign-up from %s: %d %s, want %d", tt.addr, w.Code, w.Body, tt.status)
		}
	}
	if made != 4 {
		t.Errorf("%d accounts made, want 4", made)
	}
}
