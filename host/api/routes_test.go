package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mdpress/mdpress/host/metrics"
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"
)

// noStages has no plugin running: enough for routing, which never reaches
// a stage.
type noStages struct{}

func (noStages) Client(context.Context, string) (*sdkplugin.Client, error) {
	return nil, errors.New("no stages in this test")
}
func (noStages) Plugin(string) string         { return "none" }
func (noStages) Ready() error                 { return nil }
func (noStages) Capabilities(string) []string { return nil }

// TestRoutes: unknown paths answer a JSON 404 and known API paths with the
// wrong method a JSON 405, even with the dashboard mounted at /, which
// serves GETs outside /v1 and nothing else. Every answer is nosniff.
func TestRoutes(t *testing.T) {
	dashboard := http.FileServerFS(fstest.MapFS{
		"index.html": {Data: []byte("<!doctype html><title>dashboard</title>")},
		"app.js":     {Data: []byte("void 0")},
	})
	reg := prometheus.NewRegistry()
	s := New(Options{Dashboard: dashboard}, slog.New(slog.DiscardHandler), noStages{}, metrics.New(reg))
	tests := []struct {
		method, path string
		status       int
		json         bool
		allow        string // the Allow header of a 405
	}{
		{"GET", "/v1/nope", 404, true, ""},
		{"POST", "/v1/nope", 404, true, ""},
		{"GET", "/v1", 404, true, ""},
		{"GET", "/v1/pdf/markdown", 405, true, "POST"},
		{"DELETE", "/v1/pdf/markdown", 405, true, "POST"},
		{"OPTIONS", "/v1/pdf/markdown", 405, true, "POST"},
		{"POST", "/v1/user/info", 405, true, "GET, HEAD"},
		{"POST", "/v1/openapi.json", 405, true, "GET, HEAD"},
		{"DELETE", "/v1/files/0123456789abcdef0123456789abcdef", 405, true, "GET, HEAD"},
		{"GET", "/v1/openapi.json", 200, true, ""},
		{"GET", "/healthz", 200, true, ""},
		{"HEAD", "/healthz", 200, false, ""},
		{"HEAD", "/metrics", 200, false, ""},
		{"HEAD", "/v1/openapi.json", 200, false, ""},
		{"POST", "/nope", 404, true, ""},
		{"GET", "/nope", 404, true, ""},
		{"GET", "/v2/pdf/markdown", 404, true, ""},
		{"POST", "/", 404, true, ""},
		{"GET", "/", 200, false, ""},
		{"GET", "/app.js", 200, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader("{}")))
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Fatalf("X-Content-Type-Options %q, want nosniff", got)
			}
			if got := rec.Header().Get("Allow"); got != tt.allow {
				t.Fatalf("Allow %q, want %q", got, tt.allow)
			}
			if !tt.json {
				return
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("Content-Type %q: %s", ct, rec.Body)
			}
			if tt.status >= 400 {
				var body struct{ Error string }
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error == "" {
					t.Fatalf("not an error body: %s", rec.Body)
				}
			}
		})
	}
	// The dashboard's requests are counted under its name (GET /, /app.js,
	// /nope, /v2/pdf/markdown), the API's 404s (five) as unmatched, and
	// its 405s under the route they missed, which mux's middleware alone
	// did not count.
	want := map[string]float64{"dashboard": 4, "/v1/openapi.json": 3, "/v1/pdf/markdown": 3, "/v1/user/info": 1, "/v1/files/{id}": 1, "unmatched": 5}
	got := map[string]float64{}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "mdpress_http_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" {
					got[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	for route, n := range want {
		if got[route] != n {
			t.Errorf("route %q counted %v times, want %v (all: %v)", route, got[route], n, got)
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
	if w.Code != 503 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "shutting down") ||
		!strings.Contains(w.Body.String(), "no credit") {
		t.Fatalf("%d %v %s", w.Code, w.Header(), w.Body)
	}
	// A download cut likewise is told so, and nothing of credits.
	r = httptest.NewRequest("GET", "/v1/files/0123456789abcdef0123456789abcdef", nil).WithContext(ctx)
	w = httptest.NewRecorder()
	s.fail(w, r, fmt.Errorf("open: %w", context.Canceled))
	if w.Code != 503 || !strings.Contains(w.Body.String(), "shutting down") || strings.Contains(w.Body.String(), "credit") {
		t.Fatalf("download: %d %s", w.Code, w.Body)
	}
}

// TestFailuresElsewhereSpeakOfNoCredit: a download that fails is not told
// that its PDF could not be produced or that it was not charged.
func TestFailuresElsewhereSpeakOfNoCredit(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	fail := func(path string) string {
		w := httptest.NewRecorder()
		s.fail(w, httptest.NewRequest("GET", path, nil), stage.Wrap(stage.CodeInternal, errors.New("connection reset"), "read hosted file"))
		if w.Code != 500 {
			t.Fatalf("%s: %d", path, w.Code)
		}
		return w.Body.String()
	}
	if body := fail("/v1/files/0123456789abcdef0123456789abcdef"); strings.Contains(body, "credit") || strings.Contains(body, "PDF") {
		t.Errorf("download: %s", body)
	}
	if body := fail("/v1/pdf/markdown"); !strings.Contains(body, "no credit was charged") {
		t.Errorf("conversion: %s", body)
	}
}

// TestClientGoneNotAServerError: a request whose client went away while it
// waited (for a slot, a key check, a plugin) is no server error: it is not
// logged at ERROR, and it is counted as 499, not 500.
func TestClientGoneNotAServerError(t *testing.T) {
	var logs bytes.Buffer
	s := &Server{log: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, gone := context.WithCancel(context.Background())
	gone()
	for _, path := range []string{"/v1/pdf/markdown", "/v1/user/info"} {
		r := httptest.NewRequest("POST", path, nil).WithContext(ctx)
		w := httptest.NewRecorder()
		s.fail(w, r, fmt.Errorf("admission: %w", context.Canceled))
		if w.Code != StatusClientClosed {
			t.Errorf("%s: %d, want %d", path, w.Code, StatusClientClosed)
		}
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("logged as an error:\n%s", logs.String())
	}
}

// TestAuthTimeoutDefault: without a configured timeout a key check and a
// meter call are bounded all the same; a hung account database held each
// conversion's slot, or /v1/user/info, for the whole request timeout.
func TestAuthTimeoutDefault(t *testing.T) {
	s := New(Options{}, slog.New(slog.DiscardHandler), noStages{}, metrics.New(prometheus.NewRegistry()))
	if s.opt.AuthTimeout != DefaultAuthTimeout || s.opt.MeterTimeout != DefaultMeterTimeout {
		t.Fatalf("AuthTimeout %v, MeterTimeout %v, want %v and %v", s.opt.AuthTimeout, s.opt.MeterTimeout, DefaultAuthTimeout, DefaultMeterTimeout)
	}
	s = New(Options{AuthTimeout: time.Second}, slog.New(slog.DiscardHandler), noStages{}, metrics.New(prometheus.NewRegistry()))
	if s.opt.AuthTimeout != time.Second {
		t.Fatalf("AuthTimeout %v, want the configured 1s", s.opt.AuthTimeout)
	}
}
