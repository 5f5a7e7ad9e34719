package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestFrontMatter: a document that opens with YAML front matter, as
// Jekyll and Hugo posts do, shows it as GitHub does, as a table of its
// keys over its values, on every backend; its title titles the PDF, and
// the outline holds the document's headings only. goldmark alone made the
// front matter a rule and a heading, "title: Quarterly Figures date: ...",
// which was also the PDF's title and first bookmark. Values are text,
// never HTML, and a front matter of twenty keys keeps every key and value
// whole on the page.
func TestFrontMatter(t *testing.T) {
	pdfcheck.Require(t)
	md := "---\ntitle: Quarterly Figures\ndate: 2024-01-02\ntags: [alpha, beta]\nnote: <b>bold</b> & more\n---\n" +
		"# Heading\n\nBody text.\n"
	var many strings.Builder
	many.WriteString("---\n")
	for i := range 20 {
		fmt.Fprintf(&many, "key%02d: val%02d\n", i, i)
	}
	many.WriteString("---\nAfter the table.\n")
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			_, key := h.account("pro", -1)
			resp, pdf := h.post(key, map[string]string{"markdown": md, "pageNumeration": "none"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
			}
			if got := pdfcheck.Read(t, pdf).Title; got != "Quarterly Figures" {
				t.Errorf("Title %q, want the front matter's", got)
			}
			path := filepath.Join(t.TempDir(), "doc.pdf")
			if err := os.WriteFile(path, pdf, 0o600); err != nil {
				t.Fatal(err)
			}
			if got := outlineTitles(t, path); !slices.Equal(got, []string{"Heading"}) {
				t.Errorf("outline %q, want only the document's heading", got)
			}
			text := pdfcheck.Text(t, pdf)
			for _, raw := range []string{"---", "title:", "date:"} {
				if strings.Contains(text, raw) {
					t.Errorf("the PDF shows the front matter's source %q:\n%s", raw, text)
				}
			}
			if !strings.Contains(text, "<b>bold</b> & more") {
				t.Errorf("the value's HTML is not shown as written:\n%s", text)
			}
			// Keys left to right in one row, each value under its key, the
			// heading under the table.
			ws := pdfcheck.Words(t, pdf)
			keys := []string{"title", "date", "tags", "note"}
			values := []string{"Quarterly", "2024-01-02", "alpha,", "&lt;b&gt;bold&lt;/b&gt;"}
			for i, k := range keys {
				kw, vw := wordIs(t, ws, k), wordIs(t, ws, values[i])
				first := wordIs(t, ws, keys[0])
				if d := kw.YMin - first.YMin; d > 2 || d < -2 {
					t.Errorf("key %q at y %.1f, %q at %.1f: not one header row", k, kw.YMin, keys[0], first.YMin)
				}
				if i > 0 && kw.XMin <= wordIs(t, ws, keys[i-1]).XMax {
					t.Errorf("key %q is not right of %q", k, keys[i-1])
				}
				if vw.YMin <= kw.YMax || vw.XMin < kw.XMin-12 || (i+1 < len(keys) && vw.XMin >= wordIs(t, ws, keys[i+1]).XMin) {
					t.Errorf("value %q at (%.1f, %.1f) is not under key %q at (%.1f, %.1f)", values[i], vw.XMin, vw.YMin, k, kw.XMin, kw.YMin)
				}
				if wordIs(t, ws, "Heading").YMin <= vw.YMax {
					t.Errorf("the heading is not under the table's value %q", values[i])
				}
			}

			resp, pdf = h.post(key, map[string]string{"markdown": many.String(), "pageNumeration": "none"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
			}
			ws = pdfcheck.Words(t, pdf)
			for i := range 20 {
				k, v := fmt.Sprintf("key%02d", i), fmt.Sprintf("val%02d", i)
				if kw, vw := wordIs(t, ws, k), wordIs(t, ws, v); vw.YMin <= kw.YMax {
					t.Errorf("value %q is not under key %q", v, k)
				}
			}
		})
	}
}
