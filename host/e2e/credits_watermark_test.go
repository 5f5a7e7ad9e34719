package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/config"
	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestWatermarkOnFreePlan: on every backend, every page of a PDF made for
// an account on a watermarked plan carries the configured text; a pro
// account's pages do not.
func TestWatermarkOnFreePlan(t *testing.T) {
	pdfcheck.Require(t)
	var md strings.Builder
	md.WriteString("# Watermarked\n\n")
	for i := range 120 {
		fmt.Fprintf(&md, "Paragraph %d of a document long enough to fill several pages of A4 with plain prose.\n\n", i)
	}
	doc := map[string]string{"markdown": md.String()}

	tests := []struct {
		name, plan, text string
		config           func(*config.Config)
		marked           bool
	}{
		{name: "free plan, default text", plan: "free", text: "mdpress free plan", marked: true},
		{name: "pro plan", plan: "pro", text: "mdpress free plan", marked: false},
		{name: "configured text", plan: "free", text: "Draft copy 42", marked: true,
			config: func(c *config.Config) { c.Credits.WatermarkText = "Draft copy 42" }},
	}
	for _, backend := range backends(t) {
		for _, tt := range tests {
			t.Run(backend+"/"+tt.name, func(t *testing.T) {
				opts := []hostOpt{withArgs("--backend", backend)}
				if tt.config != nil {
					opts = append(opts, writeConfig(t, tt.config))
				}
				h := startHost(t, opts...)
				_, key := h.account(tt.plan, 5)
				resp, pdf := h.post(key, doc)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%d %.200s", resp.StatusCode, pdf)
				}
				pages := rawPageText(t, pdf)
				if n := pdfcheck.Read(t, pdf).Pages; n < 3 || len(pages) != n {
					t.Fatalf("%d pages (%d in the text), want at least 3", n, len(pages))
				}
				// The mark is drawn diagonally, so pdftotext breaks it into
				// a glyph or two per line; in content order and without
				// spaces it reads as the text again.
				mark := strings.Join(strings.Fields(tt.text), "")
				for i, page := range pages {
					has := strings.Contains(strings.Join(strings.Fields(page), ""), mark)
					if has != tt.marked {
						t.Errorf("page %d of %d: watermark %q present = %v, want %v", i+1, len(pages), tt.text, has, tt.marked)
					}
				}
			})
		}
	}
}

// rawPageText is the text of each page in content-stream order.
func rawPageText(t *testing.T, pdf []byte) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", "-raw", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext -raw: %v", err)
	}
	return strings.Split(strings.TrimRight(string(out), "\f\n"), "\f")
}
