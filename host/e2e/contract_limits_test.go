package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// Limits set small so that ordinary documents cross them.
const (
	testMaxBodyBytes   = 256 << 10
	testMaxHostedBytes = 60000
)

// TestContractLimits: a body over MDPRESS_MAX_BODY_BYTES and a hosted PDF
// over MDPRESS_MAX_HOSTED_BYTES are 413s whose size field says how big and
// the limit; neither costs a credit; binary output is not bound by the
// hosted limit.
func TestContractLimits(t *testing.T) {
	pdfcheck.Require(t)
	h := startHost(t, withArgs("--backend", "fpdf"), withEnv(
		fmt.Sprintf("MDPRESS_MAX_BODY_BYTES=%d", testMaxBodyBytes),
		fmt.Sprintf("MDPRESS_MAX_HOSTED_BYTES=%d", testMaxHostedBytes),
	))
	a := newAPI(t, h)
	_, key := h.account("pro", 10)
	big := bigDocument(120 << 10)
	digits := regexp.MustCompile(`\d`)

	t.Run("request body", func(t *testing.T) {
		resp, body := a.call(t, "POST", "/v1/pdf/markdown", key, map[string]string{"markdown": bigDocument(testMaxBodyBytes + 1)}, nil)
		if resp.StatusCode != 413 {
			t.Fatalf("status %d, want 413: %.300s", resp.StatusCode, body)
		}
		e := readError(t, body)
		if e.Size == "" || !digits.MatchString(e.Size) || !strings.Contains(strings.ToLower(e.Size), "limit") {
			t.Errorf("size %q does not give the size and the limit", e.Size)
		}
		t.Logf("size: %s", e.Size)
		if got := a.credits(t, key); got != 10 {
			t.Errorf("balance %d after a refused body, want 10", got)
		}
	})
	// Refused on its declared length, before a byte of it is sent: the
	// server read the limit first, and told a client that asked to
	// continue (curl's way past 1 MiB) to send it.
	t.Run("request body declared too large", func(t *testing.T) {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(h.URL, "http://"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /v1/pdf/markdown HTTP/1.1\r\nHost: mdpress\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", key, 3*testMaxBodyBytes)
		_ = c.SetReadDeadline(time.Now().Add(700 * time.Millisecond))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("no answer with the body unsent: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 413 {
			t.Fatalf("status %d, want 413 before the body: %.300s", resp.StatusCode, body)
		}
		if e := readError(t, body); !strings.Contains(strings.ToLower(e.Size), "limit") {
			t.Errorf("size %q does not give the limit", e.Size)
		}
		if got := a.credits(t, key); got != 10 {
			t.Errorf("balance %d after a refused body, want 10", got)
		}
	})
	t.Run("hosted file", func(t *testing.T) {
		resp, body := a.call(t, "POST", "/v1/pdf/markdown", key, map[string]string{"markdown": big, "output": "url"}, nil)
		if resp.StatusCode != 413 {
			t.Fatalf("status %d, want 413: %.300s", resp.StatusCode, body)
		}
		e := readError(t, body)
		if e.Size == "" || !digits.MatchString(e.Size) || !strings.Contains(strings.ToLower(e.Size), "limit") {
			t.Errorf("size %q does not give the size and the limit", e.Size)
		}
		t.Logf("size: %s", e.Size)
		if got := a.credits(t, key); got != 10 {
			t.Errorf("balance %d after a refused hosted file, want 10", got)
		}
	})
	t.Run("binary is not bound by the hosted limit", func(t *testing.T) {
		resp, pdf := a.call(t, "POST", "/v1/pdf/markdown", key, map[string]string{"markdown": big, "output": "binary"}, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
		}
		if len(pdf) <= testMaxHostedBytes {
			t.Fatalf("the PDF is %d bytes, not over the hosted limit %d: the test proves nothing", len(pdf), testMaxHostedBytes)
		}
		if got := a.credits(t, key); got != 9 {
			t.Errorf("balance %d after one delivered conversion, want 9", got)
		}
	})
	t.Run("small hosted file", func(t *testing.T) {
		resp, body := a.call(t, "POST", "/v1/pdf/markdown", key, map[string]string{"markdown": "# Small", "output": "url"}, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	})
}

// bigDocument is about n bytes of varied Markdown.
func bigDocument(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "## Section %d\n\nParagraph %d of a long document with enough words to fill lines, "+
			"some **bold** and *italic* text, and a number %d to vary the content.\n\n", i, i, i*7919)
	}
	return b.String()
}
