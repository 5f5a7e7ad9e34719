package api

import (
	"net/http/httptest"
	"testing"
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
