package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// highlightDoc holds the same code twice, in a ```go block and in a plain
// one, then a Go line far wider than the page.
var highlightDoc = "# Code\n\n```go\nfunc greet() string {\n\treturn \"hello\"\n}\n```\n\nPlain:\n\n" +
	"```\nfunc greet() string {\n\treturn \"hello\"\n}\n```\n\n" +
	"```go\nvar long = \"" + strings.Repeat("wrapword ", 60) + "\"\n```\n"

// highlightColours are each theme's keyword and string colours (the
// themes' codePalette).
var highlightColours = map[string][2][3]byte{
	"basic":  {{0xcf, 0x22, 0x2e}, {0x0a, 0x30, 0x69}},
	"modern": {{0x7c, 0x3a, 0xed}, {0x04, 0x78, 0x57}},
}

// TestCodeHighlighting renders fenced code through the real pipeline on
// each backend and theme: the keyword and the string of a ```go block are
// in the theme's colours, the same code in a plain ``` block is not, the
// words on the page are those of the unhighlighted document in the same
// order, and a long line still wraps inside the page.
func TestCodeHighlighting(t *testing.T) {
	pdfcheck.Require(t)
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			render := func(t *testing.T, md, theme string) []byte {
				t.Helper()
				resp, pdf := h.post(key, map[string]string{"markdown": md, "theme": theme, "pageNumeration": "none"})
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
				}
				return pdf
			}
			for _, theme := range []string{"basic", "modern"} {
				t.Run(theme, func(t *testing.T) {
					pdf := render(t, highlightDoc, theme)
					words := pdfcheck.Words(t, pdf)
					var funcs, hellos []pdfcheck.Word
					for _, w := range words {
						switch {
						case w.Text == "func":
							funcs = append(funcs, w)
						case strings.Contains(w.Text, "hello"): // pdftotext -bbox writes the quotes as &quot;
							hellos = append(hellos, w)
						}
						if w.XMin < 36 || w.XMax > w.PageW-36 {
							t.Errorf("%q at x %.1f-%.1f is outside the page's margins (width %.1f)", w.Text, w.XMin, w.XMax, w.PageW)
						}
					}
					if len(funcs) != 2 || len(hellos) != 2 {
						t.Fatalf("want func and \"hello\" twice each, got %d and %d", len(funcs), len(hellos))
					}
					// render-fpdf wraps code between characters, Chromium
					// at spaces: the words may be cut, but none is lost.
					if n := strings.Count(strings.Join(strings.Fields(pdfcheck.Text(t, pdf)), ""), "wrapword"); n != 60 {
						t.Errorf("the long line shows %d of its 60 words", n)
					}
					dpi := 144
					w, hgt, pix := pdfcheck.PPM(t, pdf, 1, dpi)
					img := raster{w: w, h: hgt, pix: pix, scale: float64(dpi) / 72}
					keyword, str := highlightColours[theme][0], highlightColours[theme][1]
					other := highlightColours["modern"][0]
					if theme == "modern" {
						other = highlightColours["basic"][0]
					}
					if n := img.matching(funcs[0], keyword); n < 10 {
						t.Errorf("the go block's keyword has %d pixels of the keyword colour %x", n, keyword)
					}
					if n := img.matching(funcs[0], other); n > 0 {
						t.Errorf("the go block's keyword has %d pixels of the other theme's keyword colour %x", n, other)
					}
					if n := img.matching(hellos[0], str); n < 10 {
						t.Errorf("the go block's string has %d pixels of the string colour %x", n, str)
					}
					for _, w := range []pdfcheck.Word{funcs[1], hellos[1]} {
						if n := img.matching(w, keyword) + img.matching(w, str); n > 0 {
							t.Errorf("the plain block's %q has %d pixels of the highlight colours", w.Text, n)
						}
					}
					plain := render(t, strings.ReplaceAll(highlightDoc, "```go", "```"), theme)
					got, want := strings.Fields(pdfcheck.Text(t, pdf)), strings.Fields(pdfcheck.Text(t, plain))
					if strings.Join(got, " ") != strings.Join(want, " ") {
						t.Errorf("highlighting changed the text:\n%s\nwithout it:\n%s", got, want)
					}
				})
			}
		})
	}
}

// matching counts the pixels in a word's box within a few steps of colour c.
func (r raster) matching(w pdfcheck.Word, c [3]byte) int {
	x0, y0, x1, y1 := r.box(w)
	n := 0
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			cr, cg, cb := r.at(x, y)
			if absDiff(cr, c[0]) <= 24 && absDiff(cg, c[1]) <= 24 && absDiff(cb, c[2]) <= 24 {
				n++
			}
		}
	}
	return n
}

// TestCodeHighlightingBounded sends code blocks on which chroma's YAML
// lexer, a backtracking regular expression at every "[", takes time
// quadratic in the block (about 10 s for 8 KiB, minutes for these): the
// highlighting budget gives up and the blocks print plain, well inside
// the render timeout.
func TestCodeHighlightingBounded(t *testing.T) {
	pdfcheck.Require(t)
	block := strings.Repeat("[", 60<<10)
	md := fmt.Sprintf("# Hostile\n\n```yaml\n%s\n```\n\n```yaml\n%s\n```\n", block, block)
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			start := time.Now()
			resp, pdf := h.post(key, map[string]string{"markdown": md, "pageSize": "A0"})
			took := time.Since(start)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d after %v: %.300s", resp.StatusCode, took, pdf)
			}
			t.Logf("%s: %v", backend, took)
			if took > 20*time.Second {
				t.Errorf("the hostile blocks took %v", took)
			}
			if n := strings.Count(pdfcheck.Text(t, pdf), "["); n != 2*len(block) {
				t.Errorf("the PDF shows %d of the blocks' %d brackets", n, 2*len(block))
			}
		})
	}
}

// TestCodeHighlightingCRLF renders a document written with CR LF line
// endings, as editors on Windows save it, whose highlighted lines end in
// comments (the lexers take the CR into the comment's token): each backend
// prints the same lines as for the document with LF endings, no blank
// line between them.
func TestCodeHighlightingCRLF(t *testing.T) {
	pdfcheck.Require(t)
	doc := "# Setup\n\n```bash\n# install deps\nnpm ci # clean\n# build it\nnpm run build\n```\n\n" +
		"```yaml\nname: ci # the name\non: push # trigger\n```\n"
	crlf := strings.ReplaceAll(doc, "\n", "\r\n")
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			lines := func(md string) []string {
				t.Helper()
				resp, pdf := h.post(key, map[string]string{"markdown": md, "pageNumeration": "none"})
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
				}
				return strings.Split(strings.TrimSpace(pdfcheck.Text(t, pdf)), "\n")
			}
			got, want := lines(crlf), lines(doc)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("with CR LF the page reads\n%q\nwith LF\n%q", got, want)
			}
		})
	}
}

// TestCodeHighlightingLargeBlock prints a 750-line JSON file, 30,000
// coloured numbers, and a minified line of as many: each is a few seconds
// on Chromium, as the same text plain is under one (in one inline context
// Chromium took past the render's 60 s), and reads as the plain text.
func TestCodeHighlightingLargeBlock(t *testing.T) {
	pdfcheck.Require(t)
	row := "[" + strings.TrimSuffix(strings.Repeat("1,2,3,4,5,6,7,8,9,0,", 4), ",") + "],\n"
	lines := "# Data\n\n```json\n" + strings.Repeat(row, 750) + "```\n"
	minified := "# Data\n\n```json\n" + strings.Repeat(strings.TrimSuffix(row, "\n"), 750) + "\n```\n"
	for _, backend := range backends(t) {
		if backend != "chrome" {
			continue // render-fpdf lays out runs, not elements
		}
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			for name, md := range map[string]string{"lines": lines, "minified": minified} {
				start := time.Now()
				resp, pdf := h.post(key, map[string]string{"markdown": md, "pageNumeration": "none"})
				took := time.Since(start)
				if resp.StatusCode != 200 {
					t.Fatalf("%s: status %d after %v: %.300s", name, resp.StatusCode, took, pdf)
				}
				t.Logf("%s: %v", name, took)
				if took > 30*time.Second {
					t.Errorf("%s: the block took %v", name, took)
				}
				resp, plain := h.post(key, map[string]string{"markdown": strings.Replace(md, "```json", "```", 1), "pageNumeration": "none"})
				if resp.StatusCode != 200 {
					t.Fatalf("%s plain: status %d: %.300s", name, resp.StatusCode, plain)
				}
				if got, want := pdfcheck.Text(t, pdf), pdfcheck.Text(t, plain); got != want {
					t.Errorf("%s: highlighting changed the text", name)
				}
			}
		})
	}
}
