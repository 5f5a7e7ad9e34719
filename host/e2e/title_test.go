package e2e

import (
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestPDFTitle: a PDF's title, which viewers show in their tab or title
// bar, is the document's first heading on every backend. Without a
// heading, Chromium would fall back to its page's address, about:blank; the
// title is then "document", the name its download gets, or absent.
func TestPDFTitle(t *testing.T) {
	pdfcheck.Require(t)
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			_, key := h.account("pro", -1)
			for _, tt := range []struct{ name, markdown, want string }{
				{"heading", "Intro line.\n\n# Quarterly report\n\nText.\n", "Quarterly report"},
				{"no heading", "Only a paragraph, no heading.\n", "document"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					resp, pdf := h.post(key, map[string]string{"markdown": tt.markdown})
					if resp.StatusCode != 200 {
						t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
					}
					got := pdfcheck.Read(t, pdf).Title
					if got != tt.want && (backend != "fpdf" || tt.name != "no heading" || got != "") {
						t.Errorf("Title %q, want %q", got, tt.want)
					}
				})
			}
		})
	}
}
