package web

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestNoFraming: other sites cannot frame the dashboard (its sign-up
// button could be clicked for the visitor).
func TestNoFraming(t *testing.T) {
	w := httptest.NewRecorder()
	Handler().ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 200 || w.Header().Get("X-Frame-Options") != "DENY" ||
		!strings.Contains(w.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
}

// TestSignupOffered: the page offers sign-up only where the server takes
// it, and names the plan a new account gets; with sign-up off it says how
// to get a key instead of showing a button that answers "no such endpoint".
func TestSignupOffered(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      []Option
		want, not []string
	}{
		{"off", nil, []string{`id="signup-off"`, "mdpress accounts create"}, []string{"signup-btn", "{{"}},
		{"free", []Option{WithSignup("free")}, []string{`id="signup-btn"`, "on the free plan"}, []string{"signup-off", "{{"}},
		{"pro", []Option{WithSignup("pro")}, []string{`id="signup-btn"`, "on the pro plan"}, []string{"free plan"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			Handler(tc.opts...).ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			page := w.Body.String()
			for _, s := range tc.want {
				if !strings.Contains(page, s) {
					t.Errorf("page lacks %q", s)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(page, s) {
					t.Errorf("page holds %q", s)
				}
			}
		})
	}
}
