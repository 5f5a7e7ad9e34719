package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// errorRecorder collects what check reports instead of failing the test.
type errorRecorder struct {
	testing.TB
	errs []string
}

func (r *errorRecorder) Helper() {}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestOpenAPICheckHasTeeth feeds api.check exchanges that break the
// document or the contract, and one that keeps both, so that a passing
// suite means something.
func TestOpenAPICheckHasTeeth(t *testing.T) {
	h := startHost(t, withArgs("--backend", "fpdf"))
	a := newAPI(t, h)
	const info = `{"userId":"u1","subscription":{"planName":"pro","currentCredits":7,"lastReset":"2026-01-01T00:00:00Z","monthlyCredits":5000,"hasWatermark":false,"hasDataRetention":true,"dataRetentionDays":30}}`
	tests := []struct {
		name         string
		method, path string
		reqBody      string
		status       int
		contentType  string
		body         string
		want         string // fragment of a reported problem; "" for none
	}{
		{"valid user info", "GET", "/v1/user/info", "", 200, "application/json", info, ""},
		{"credits as a string", "GET", "/v1/user/info", "", 200, "application/json", strings.Replace(info, `"currentCredits":7`, `"currentCredits":"7"`, 1), "does not match the document"},
		{"credits as a fraction", "GET", "/v1/user/info", "", 200, "application/json", strings.Replace(info, `"currentCredits":7`, `"currentCredits":7.5`, 1), "does not match the document"},
		{"lastReset missing", "GET", "/v1/user/info", "", 200, "application/json", strings.Replace(info, `"lastReset":"2026-01-01T00:00:00Z",`, ``, 1), "does not match the document"},
		{"watermark as a string", "GET", "/v1/user/info", "", 200, "application/json", strings.Replace(info, `"hasWatermark":false`, `"hasWatermark":"false"`, 1), "does not match the document"},
		{"PDF as HTML", "POST", "/v1/pdf/markdown", `{"markdown":"x"}`, 200, "text/html", "<p>x</p>", "does not match the document"},
		{"url response without url", "POST", "/v1/pdf/markdown", `{"markdown":"x","output":"url"}`, 200, "application/json", `{"link":"x"}`, "does not match the document"},
		{"undocumented status", "POST", "/v1/pdf/markdown", `{"markdown":"x"}`, 418, "application/json", `{"error":"teapot"}`, "does not match the document"},
		{"error without error", "POST", "/v1/pdf/markdown", `{"markdown":""}`, 400, "application/json", `{"message":"InvalidRequest"}`, "no error text"},
		{"error as text", "GET", "/v1/nope", "", 404, "text/plain", "404 page not found", "not a JSON object"},
		{"error with internals", "POST", "/v1/pdf/markdown", `{"markdown":"x"}`, 500, "application/json", `{"error":"open /tmp/plugin42/sock: rpc error"}`, "shows internals"},
		{"400 for a valid request", "POST", "/v1/pdf/markdown", `{"markdown":"x","pageSize":"Folio"}`, 400, "application/json", `{"error":"bad"}`, "document accepts"},
		{"200 for an invalid request", "POST", "/v1/pdf/markdown", `{"markdown":"x","pageSize":"A10"}`, 200, "application/pdf", "%PDF-1.4", "document rejects"},
		{"200 for an unknown route", "GET", "/v1/secret", "", 200, "application/json", `{}`, "no such operation"},
		{"error without its request id", "POST", "/v1/pdf/markdown", `{"markdown":""}`, 400, "application/json", `{"error":"the markdown field must not be empty"}`, "X-Request-Id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &errorRecorder{TB: t}
			hasBody := tt.reqBody != ""
			req := a.request(t, tt.method, tt.path, "mdp_test", []byte(tt.reqBody), hasBody, nil)
			header := http.Header{"Content-Type": {tt.contentType}, "X-Request-Id": {"0123456789abcdef"}}
			if tt.name == "error without its request id" {
				header.Del("X-Request-Id")
			}
			resp := &http.Response{StatusCode: tt.status, Header: header, Body: io.NopCloser(strings.NewReader(""))}
			a.check(rec, req, []byte(tt.reqBody), resp, []byte(tt.body))
			got := strings.Join(rec.errs, "\n")
			switch {
			case tt.want == "" && got != "":
				t.Errorf("a valid exchange was reported:\n%s", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Errorf("want a report containing %q, got:\n%s", tt.want, got)
			}
		})
	}
}
