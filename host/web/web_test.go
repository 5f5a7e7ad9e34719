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
		// Without JavaScript the form would only reload the page: the
		// page says so, whatever else it offers.
		{"off", nil, []string{`id="signup-off"`, "mdpress accounts create", `<noscript>`}, []string{"signup-btn", "{{"}},
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

// TestPageNotStored: the page that shows a new key is kept by no cache,
// and sends no Referer; the static assets stay cacheable.
func TestPageNotStored(t *testing.T) {
	h := Handler(WithSignup("free"))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 200 || w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("Referrer-Policy") != "no-referrer" ||
		!strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("/: %d %v", w.Code, w.Header())
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/app.js", nil))
	if w.Code != 200 || w.Header().Get("Cache-Control") != "" {
		t.Fatalf("/app.js: %d %v", w.Code, w.Header())
	}
}

// TestPageEverySpelling: the router passes paths uncleaned; each spelling
// of the page's path gets the rendered page, never its template.
func TestPageEverySpelling(t *testing.T) {
	h := Handler(WithSignup("free"))
	for _, p := range []string{"/", "//", "/./", "/%2e%2e/", "/index.html", "/x/../"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", p, nil))
		if w.Code != 200 || strings.Contains(w.Body.String(), "{{") || !strings.Contains(w.Body.String(), "on the free plan") ||
			w.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %d %v", p, w.Code, w.Header())
		}
	}
	for _, p := range []string{"/app.js", "//app.js", "/./app.css"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", p, nil))
		if w.Code != 200 || strings.Contains(w.Body.String(), "{{") {
			t.Errorf("%s: %d", p, w.Code)
		}
	}
}
