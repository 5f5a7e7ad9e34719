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
