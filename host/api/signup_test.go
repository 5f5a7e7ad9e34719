package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
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

// TestCutAtShutdownAnswered503: a request the server cut at shutdown is
// told so with 503 wherever it was waiting (a slot, a key check, a
// plugin), not a 500.
func TestCutAtShutdownAnswered503(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	ctx, cut := context.WithCancelCause(context.Background())
	cut(ErrShuttingDown)
	r := httptest.NewRequest("POST", "/v1/pdf/markdown", nil).WithContext(ctx)
	w := httptest.NewRecorder()
	s.fail(w, r, fmt.Errorf("admission: %w", context.Canceled))
	if w.Code != 503 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "shutting down") {
		t.Fatalf("%d %v %s", w.Code, w.Header(), w.Body)
	}
}
