package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

const (
	convertPath = "/v1/pdf/markdown"
	replayed    = "Idempotent-Replayed"
)

// TestIdempotencyKeyChargesOnce: a retry with the same Idempotency-Key and
// body replays the first result and is not charged; the key with another
// body is refused; a burst of the same retry is charged once.
func TestIdempotencyKeyChargesOnce(t *testing.T) {
	pdfcheck.Require(t)
	h := startHost(t, fpdf())
	uid, key := h.account("pro", 20)
	idem := func(k string) map[string]string { return map[string]string{"Idempotency-Key": k} }
	want := int64(20)
	charged := func(n int64, when string) {
		t.Helper()
		want -= n
		if b := h.balance(key); b != want {
			t.Fatalf("%s: balance %d, want %d", when, b, want)
		}
	}

	t.Run("binary replay is byte-identical", func(t *testing.T) {
		body := map[string]string{"markdown": "# Once\n\nCharged a single time."}
		r1, pdf1 := h.do("POST", convertPath, key, body, idem("order-1"))
		r2, pdf2 := h.do("POST", convertPath, key, body, idem("order-1"))
		if r1.StatusCode != 200 || r2.StatusCode != 200 {
			t.Fatalf("statuses %d, %d: %.200s %.200s", r1.StatusCode, r2.StatusCode, pdf1, pdf2)
		}
		if r1.Header.Get(replayed) != "" || r2.Header.Get(replayed) != "true" {
			t.Fatalf("%s headers: first %q, retry %q; want none, then true", replayed, r1.Header.Get(replayed), r2.Header.Get(replayed))
		}
		if !isPDF(pdf1) || !bytes.Equal(pdf1, pdf2) {
			t.Fatalf("the retry did not return the same PDF (%d and %d bytes)", len(pdf1), len(pdf2))
		}
		if r2.Header.Get("Content-Type") != "application/pdf" {
			t.Fatalf("replay Content-Type %q", r2.Header.Get("Content-Type"))
		}
		charged(1, "after a request and its retry")
	})

	t.Run("url replay is the same URL", func(t *testing.T) {
		body := map[string]string{"markdown": "# Hosted once", "output": "url"}
		r1, b1 := h.do("POST", convertPath, key, body, idem("order-2"))
		r2, b2 := h.do("POST", convertPath, key, body, idem("order-2"))
		if r1.StatusCode != 200 || r2.StatusCode != 200 || !bytes.Equal(b1, b2) || !bytes.Contains(b1, []byte(`"url"`)) {
			t.Fatalf("first %d %s, retry %d %s: want the same URL twice", r1.StatusCode, b1, r2.StatusCode, b2)
		}
		if r2.Header.Get(replayed) != "true" {
			t.Fatalf("retry lacks %s: true", replayed)
		}
		charged(1, "after a hosted request and its retry")
		var out struct{ URL string }
		mustJSON(t, b1, &out)
		resp, err := http.Get(out.URL)
		if err != nil {
			t.Fatal(err)
		}
		pdf, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !isPDF(pdf) || !strings.Contains(pdfcheck.Text(t, pdf), "Hosted once") {
			t.Fatalf("the replayed URL does not download the document: %d", resp.StatusCode)
		}
	})

	t.Run("same key with another body is refused", func(t *testing.T) {
		resp, body := h.do("POST", convertPath, key, map[string]string{"markdown": "# Something else"}, idem("order-1"))
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("status %d, want 400: %s", resp.StatusCode, body)
		}
		e := decodeError(t, resp.StatusCode, body)
		if !strings.Contains(e.Error, "Idempotency-Key") {
			t.Fatalf("error %q does not name the Idempotency-Key", e.Error)
		}
		// As every 400: details names the field, and the client is told
		// what to do.
		if e.Details["field"] != "Idempotency-Key" || !strings.Contains(e.Error, "new key") {
			t.Errorf("error %q, details %v: want the field named and a new key asked for", e.Error, e.Details)
		}
		charged(0, "after a refused reuse")
	})

	t.Run("without a key every request is charged", func(t *testing.T) {
		body := map[string]string{"markdown": "# Once\n\nCharged a single time."}
		for range 2 {
			if resp, b := h.post(key, body); resp.StatusCode != 200 || resp.Header.Get(replayed) != "" {
				t.Fatalf("status %d, %s %q: %.200s", resp.StatusCode, replayed, resp.Header.Get(replayed), b)
			}
		}
		charged(2, "after two requests without a key")
	})

	t.Run("the key belongs to its account", func(t *testing.T) {
		_, otherKey := h.account("pro", 3)
		resp, _ := h.do("POST", convertPath, otherKey, map[string]string{"markdown": "# Once\n\nCharged a single time."}, idem("order-1"))
		if resp.StatusCode != 200 || resp.Header.Get(replayed) != "" {
			t.Fatalf("another account's request with the same key: %d, %s %q", resp.StatusCode, replayed, resp.Header.Get(replayed))
		}
		if b := h.balance(otherKey); b != 2 {
			t.Fatalf("the other account's balance is %d, want 2", b)
		}
		charged(0, "after another account used the same key")
	})

	t.Run("a burst of one retry is charged once", func(t *testing.T) {
		const n = 10
		outs := burst([]*host{h}, key, n, func(int) any { return map[string]string{"markdown": "# Burst of retries"} }, idem("order-3"))
		var first []byte
		for i, o := range outs {
			switch {
			case o.err != nil:
				t.Fatalf("request %d: %v", i, o.err)
			case o.status == http.StatusOK:
				if first == nil {
					first = o.body
				}
				if !isPDF(o.body) || !bytes.Equal(o.body, first) {
					t.Fatalf("request %d: a different PDF for the same key", i)
				}
			case o.status == http.StatusTooManyRequests:
				// The first is still running; the client is told to retry.
				decodeError(t, o.status, o.body)
				if o.header.Get("Retry-After") == "" {
					t.Fatalf("request %d: 429 without Retry-After", i)
				}
			default:
				t.Fatalf("request %d: status %d %.200s", i, o.status, o.body)
			}
		}
		if first == nil {
			t.Fatal("no request of the burst got its PDF")
		}
		t.Logf("statuses %v", statuses(outs))
		charged(1, "after a burst of one idempotent request")
	})

	checkLedger(t, accountStore{name: "sqlite"}.open(t, h.DataDir, 0), uid, want)
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}
