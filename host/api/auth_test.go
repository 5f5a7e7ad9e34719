package api

import (
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mdpress/mdpress/host/metrics"
)

// TestHeadersNotUTF8: HTTP lets header values carry bytes that are not
// UTF-8, which a protobuf string cannot. A key or an Idempotency-Key made
// of them is the client's mistake (401, 400), not a stage failure (500).
func TestHeadersNotUTF8(t *testing.T) {
	s := New(Options{MaxBodyBytes: 1 << 20}, slog.New(slog.DiscardHandler), noStages{}, metrics.New(prometheus.NewRegistry()))
	for _, method := range []string{"POST /v1/pdf/markdown", "GET /v1/user/info"} {
		m, path, _ := strings.Cut(method, " ")
		r := httptest.NewRequest(m, path, strings.NewReader(`{"markdown":"# a"}`))
		r.Header.Set("Authorization", "Bearer mdp_\xff")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != 401 || !strings.Contains(w.Body.String(), authText) {
			t.Errorf("%s with a key that is not UTF-8: %d %s, want 401", method, w.Code, w.Body)
		}
	}

	r := httptest.NewRequest("POST", "/v1/pdf/markdown", strings.NewReader(`{"markdown":"# a"}`))
	r.Header.Set("Idempotency-Key", "invoice-\xff")
	w := httptest.NewRecorder()
	_, _, err := s.decodeConversion(w, r, &heldBody{ReadCloser: r.Body, b: s.bodies})
	var re *requestError
	if !errors.As(err, &re) || re.api == nil || re.api.Status != 400 || re.api.Body.Details["field"] != "Idempotency-Key" {
		t.Fatalf("Idempotency-Key that is not UTF-8: %v, want a 400 naming the header", err)
	}
}
