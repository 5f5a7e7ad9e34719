package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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
				// Control characters, which viewers and tools (pdfinfo in a
				// terminal) would show raw, are spaces: render-fpdf wrote
				// the escape sequence, the NUL and the bell as they came.
				{"control characters in front matter", "---\ntitle: \"Q\\e[2J3\\0report\\a\"\n---\n\nText.\n", "Q [2J3 report"},
				{"control characters in a heading", "# Q\x1b[31m3\x7freport\n\nText.\n", "Q [31m3 report"},
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

// TestPDFDisplaysTitle: viewers show the PDF's title in their title bar
// and tab, not its file name (a hosted file's is its 128-bit id), on every
// backend, compressed or not. render-fpdf wrote no /ViewerPreferences.
func TestPDFDisplaysTitle(t *testing.T) {
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf not installed")
	}
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			_, key := h.account("pro", -1)
			resp, pdf := h.post(key, map[string]string{"markdown": "# Quarterly report\n\nText.\n"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
			}
			prefs, _ := pdfCatalog(t, pdf)["/ViewerPreferences"].(map[string]any)
			if prefs["/DisplayDocTitle"] != true {
				t.Errorf("/ViewerPreferences %v, want /DisplayDocTitle true", prefs)
			}
			path := filepath.Join(t.TempDir(), "doc.pdf")
			if err := os.WriteFile(path, pdf, 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("qpdf", "--check", path).CombinedOutput(); err != nil {
				t.Fatalf("qpdf --check: %v\n%s", err, out)
			}
		})
	}
}

// TestPDFMetadata: what a reader shows of a PDF besides its pages names
// mdpress and follows the document, on every backend, marked or not.
// Chromium wrote its user agent as the Creator (the exact browser version
// that rendered the document, in every PDF handed out) and Skia as the
// Producer, and titled the bookmark of a heading that wraps with the
// words of its lines run together where the line broke ("on andon").
func TestPDFMetadata(t *testing.T) {
	pdfcheck.Require(t)
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf not installed")
	}
	long := "A heading long enough to wrap onto a second and a third line on a small page, Überblick 日本語"
	md := "# " + long + "\n\nText.\n\n## Short one\n\nMore text.\n"
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			for _, plan := range []string{"pro", "free"} { // free is watermarked
				t.Run(plan, func(t *testing.T) {
					_, key := h.account(plan, -1)
					resp, pdf := h.post(key, map[string]string{"markdown": md, "pageSize": "A6"})
					if resp.StatusCode != 200 {
						t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
					}
					info := pdfcheck.Read(t, pdf)
					if !strings.HasPrefix(info.Creator, "mdpress") || info.Producer != "mdpress" {
						t.Errorf("Creator %q, Producer %q: want mdpress's", info.Creator, info.Producer)
					}
					if bytes.Contains(pdf, []byte("HeadlessChrome")) {
						t.Error("the browser's user agent is still in the file")
					}
					path := filepath.Join(t.TempDir(), "doc.pdf")
					if err := os.WriteFile(path, pdf, 0o600); err != nil {
						t.Fatal(err)
					}
					if out, err := exec.Command("qpdf", "--check", path).CombinedOutput(); err != nil {
						t.Fatalf("qpdf --check: %v\n%s", err, out)
					}
					ws := pdfcheck.Words(t, pdf)
					if findWord(t, ws, "heading").YMin == findWord(t, ws, "Überblick").YMin {
						t.Fatal("the long heading fits one line at A6: the test needs it wrapped")
					}
					got := outlineTitles(t, path)
					want := []string{long, "  Short one"}
					if !slices.Equal(got, want) {
						t.Errorf("outline %q, want %q", got, want)
					}
				})
			}
		})
	}
}

// outlineTitles reads the bookmarks of the PDF at path with qpdf, in
// order, each indented two spaces per level.
func outlineTitles(t *testing.T, path string) []string {
	t.Helper()
	raw, err := exec.Command("qpdf", "--json", "--json-key=outlines", path).Output()
	if err != nil {
		t.Fatalf("qpdf --json: %v", err)
	}
	type item struct {
		Title string `json:"title"`
		Kids  []item `json:"kids"`
	}
	var doc struct {
		Outlines []item `json:"outlines"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("qpdf --json: %v", err)
	}
	var out []string
	var walk func([]item, string)
	walk = func(items []item, indent string) {
		for _, it := range items {
			out = append(out, indent+it.Title)
			walk(it.Kids, indent+"  ")
		}
	}
	walk(doc.Outlines, "")
	return out
}

// TestOutlineMatchesHeadings: the bookmarks are the document's headings,
// their texts and nesting, on every backend, whichever page each lands
// on. Chromium titled the bookmark of a heading that a page break pushed
// to the top of the next page with what it had laid out of it before the
// break, then all of it: "Sub 4Sub 4", or a long heading's first line and
// then the heading, its lines run together; and it added the numbers of
// a heading's footnote references ("Start1"), which render-fpdf's
// bookmarks and the PDF's title leave out.
func TestOutlineMatchesHeadings(t *testing.T) {
	pdfcheck.Require(t)
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf not installed")
	}
	var md strings.Builder
	want := []string{"Start"}
	md.WriteString("# Start[^s]\n\n[^s]: A footnote, whose number is no part of the heading's title.\n\n")
	for s := range 30 {
		section := fmt.Sprintf("Section %d with a heading long enough that it wraps on the page at this size of type", s)
		fmt.Fprintf(&md, "## %s\n\n", section)
		for i := range 6 {
			fmt.Fprintf(&md, "Filler paragraph %d.%d that takes some room on the page so headings fall on different pages.\n\n", s, i)
		}
		fmt.Fprintf(&md, "### Sub %d\n\nText.\n\n", s)
		want = append(want, "  "+section, fmt.Sprintf("    Sub %d", s))
	}
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			pdf, path := renderThemed(t, md.String(), backend, "modern")
			// The test needs a heading at the top of a page: its first
			// line there.
			top := false
			for _, p := range pdfcheck.PageText(t, pdf)[1:] {
				top = top || strings.HasPrefix(strings.TrimSpace(p), "Sub ") || strings.HasPrefix(strings.TrimSpace(p), "Section ")
			}
			if !top {
				t.Fatal("no heading starts a page: the test needs one")
			}
			if got := outlineTitles(t, path); !slices.Equal(got, want) {
				t.Errorf("outline %q, want %q", got, want)
			}
		})
	}
}

// TestOutlineMath: a heading's formula goes into the PDF's title and
// bookmarks in one plain form on every backend, math typed on one line.
// The title and render-fpdf's bookmarks had its TeX source
// ("e^{i\pi}+1=0"), Chromium's bookmarks its characters run together
// ("𝑒𝑖𝜋+1=0", read as e times i times pi, and "∑𝑘=1𝑛𝑘=𝑛(𝑛+1)2"); the
// plain form then spaced a letter from a term with scripts ("E=m c^2").
func TestOutlineMath(t *testing.T) {
	pdfcheck.Require(t)
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf not installed")
	}
	md := "# Euler $e^{i\\pi}+1=0$\n\nText $x^2$.\n\n## Sum $\\sum_{k=1}^n k = \\frac{n(n+1)}{2}$ and $x_1$\n\nMore.\n\n" +
		"## Energy $E=mc^2$, $\\sin x$\n\nEnd.\n"
	want := []string{"Euler e^(iπ)+1=0", "  Sum ∑_(k=1)^n k=(n(n+1))/2 and x_1", "  Energy E=mc^2, sin x"}
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			pdf, path := renderThemed(t, md, backend, "modern")
			if got := pdfcheck.Read(t, pdf).Title; got != "Euler e^(iπ)+1=0" {
				t.Errorf("Title %q, want %q", got, "Euler e^(iπ)+1=0")
			}
			if got := outlineTitles(t, path); !slices.Equal(got, want) {
				t.Errorf("outline %q, want %q", got, want)
			}
			pdf, _ = renderThemed(t, "# $E=mc^2$\n\nText.\n", backend, "modern")
			if got := pdfcheck.Read(t, pdf).Title; got != "E=mc^2" {
				t.Errorf("Title %q, want %q", got, "E=mc^2")
			}
		})
	}
}
