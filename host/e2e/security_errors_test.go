package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// leaks are what must never reach a client: paths, Go and gRPC
// plumbing, plugin names, keys.
var leaks = regexp.MustCompile(`(?i)/tmp/|/work/|/root/|/usr/|rpc error|desc = |goroutine|panic|\.go:\d|grpc|runtime\.|sqlite|parse-goldmark|style-themes|render-(fpdf|chrome)|sink-(disk|s3)|auth-apikey|meter-credits|mdp_[a-z0-9]{8}`)

// TestSecurityHostileRequests sends malformed and oversized requests.
// Each must be answered quickly with the contract's JSON error body (or a
// PDF where the input is merely odd), never with internals, and a
// rejected value is repeated only in part.
func TestSecurityHostileRequests(t *testing.T) {
	pdfcheck.Require(t)
	h := startHost(t, withArgs("--backend", "fpdf"))
	_, key := h.account("pro", 1000)
	tests := []struct {
		name    string
		body    string
		ctype   string
		auth    string
		status  int    // 0: a PDF or a 400 both do
		maxBody int    // bytes; 0 means the default of 2 KiB
		text    string // words a converted PDF shows, in order
	}{
		{name: "unclosed object", body: `{"markdown":`, status: 400},
		{name: "array", body: `[]`, status: 400},
		{name: "number too large", body: `{"markdown":"a","output":1e999999}`, status: 400},
		{name: "deeply nested arrays in an unknown field", body: `{"markdown":"a","x":` + strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20) + `}`, status: 400},
		{name: "unclosed nested objects", body: `{"markdown":"a","x":` + strings.Repeat(`{"a":`, 1<<20), status: 400},
		{name: "invalid UTF-8 in markdown", body: "{\"markdown\":\"alpha \xff\xfe \xc3\x28 omega\"}", text: "alpha omega"},
		{name: "lone surrogate escape", body: `{"markdown":"alpha \ud800 omega"}`, text: "alpha omega"},
		{name: "NUL escape", body: `{"markdown":"alpha \u0000 omega"}`, text: "alpha omega"},
		{name: "raw control character", body: "{\"markdown\":\"a \x01 b\"}", status: 400},
		{name: "huge rejected value", body: `{"markdown":"a","pageSize":"` + strings.Repeat("A", 5<<20) + `"}`, status: 400},
		{name: "markup in a rejected value", body: `{"markdown":"a","theme":"<script>alert(1)</script>"}`, status: 400},
		{name: "text/plain that is JSON", body: `{"markdown":"# Plain heading"}`, ctype: "text/plain", status: 200, text: "Plain heading"},
		{name: "form body", body: `markdown=%23hi`, ctype: "application/x-www-form-urlencoded", status: 400},
		{name: "body over the limit", body: `{"markdown":"` + strings.Repeat("a", 11<<20) + `"}`, status: 413},
		{name: "key with junk", body: `{"markdown":"a"}`, auth: "Bearer " + key + "x", status: 401},
		{name: "1 MB Authorization", body: `{"markdown":"a"}`, auth: "Bearer " + strings.Repeat("k", 1<<20-100), status: 401},
		{name: "unicode Authorization", body: `{"markdown":"a"}`, auth: "Bearer ключ✓", status: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", h.URL+"/v1/pdf/markdown", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			req.Header.Set("Authorization", "Bearer "+key)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s", took)
			}
			if tt.status != 0 && resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.status, body)
			}
			if resp.StatusCode == 200 {
				// A reader opens it and finds the document's words, the
				// bytes that are not text dropped or replaced between them.
				if !strings.HasPrefix(string(body), "%PDF-") {
					t.Fatalf("200 without a PDF: %.100s", body)
				}
				words := strings.Fields(pdfcheck.Text(t, body))
				var kept []string
				for _, w := range words {
					if w == "alpha" || w == "omega" || w == "Plain" || w == "heading" {
						kept = append(kept, w)
					}
				}
				if got := strings.Join(kept, " "); got != tt.text {
					t.Fatalf("the PDF reads %q, want the words %q of the document", strings.Join(words, " "), tt.text)
				}
				return
			}
			if tt.status == 0 && resp.StatusCode != 400 {
				t.Fatalf("status %d, want a PDF or 400: %.300s", resp.StatusCode, body)
			}
			checkSafeError(t, body, tt.maxBody)
		})
	}
}

// TestSecurityHostedFileErrors asks for hosted files that do not exist, in
// shapes that once reached the disk or redirected: each is a JSON 404
// without internals.
func TestSecurityHostedFileErrors(t *testing.T) {
	h := startHost(t, withArgs("--backend", "fpdf"))
	for _, path := range []string{
		"/v1/files/" + strings.Repeat("0", 32),
		"/v1/files/" + strings.Repeat("A", 32),
		"/v1/files/..%2f..%2f..%2fetc%2fpasswd",
		"/v1/files/%2e%2e",
		"/v1/files/" + strings.Repeat("a", 4096),
	} {
		t.Run(path[:min(len(path), 40)], func(t *testing.T) {
			out, err := exec.Command("curl", "-s", "--path-as-is", "-o", "-", "-w", "\n%{http_code}", h.URL+path).Output()
			if err != nil {
				t.Fatalf("curl: %v", err)
			}
			cut := strings.LastIndexByte(string(out), '\n')
			body, status := string(out[:max(cut, 0)]), string(out[cut+1:])
			if status != "404" {
				t.Fatalf("status %s, want 404: %.200s", status, body)
			}
			checkSafeError(t, []byte(body), 0)
		})
	}
}

// checkSafeError asserts the contract's error shape, a bounded size and no
// internals.
func checkSafeError(t *testing.T, body []byte, maxBody int) {
	t.Helper()
	if maxBody == 0 {
		maxBody = 2 << 10
	}
	if len(body) > maxBody {
		t.Errorf("error body of %d bytes, want at most %d", len(body), maxBody)
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		t.Fatalf("not the contract's error body: %.300s", body)
	}
	if m := leaks.Find(body); m != nil {
		t.Errorf("error body carries %q: %.300s", m, body)
	}
}
