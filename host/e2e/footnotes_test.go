package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestFootnoteBacklinks: each footnote ends with a "↩" per reference to
// it, and a reader who follows one lands on the page of that reference,
// on every backend. Goldmark's HTML gives Chromium these links;
// render-fpdf drew none, so a reader of its PDFs could jump to a note but
// not back. The references are on two pages, and note b ends with a code
// block, after which goldmark puts its back link on a line of its own.
func TestFootnoteBacklinks(t *testing.T) {
	pdfcheck.Require(t)
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf not installed")
	}
	var md strings.Builder
	md.WriteString("Opening paragraph.\n\nFirst[^a] reference.\n\n")
	for range 40 {
		md.WriteString("Filler paragraph that pushes the second reference to a later page.\n\n")
	}
	// A heading measures the paragraph after it before placing it: that
	// paragraph's references still count once.
	md.WriteString("## Later\n\nAgain[^a] and Other[^b].\n\n[^a]: Note A.\n[^b]: Note B.\n\n        code in note b\n")
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			pdf, out := renderThemed(t, md.String(), backend, "modern")
			words := pdfcheck.Words(t, pdf)
			refs := []pdfcheck.Word{findWord(t, words, "First"), findWord(t, words, "Again"), findWord(t, words, "Other")}
			if refs[0].Page == refs[1].Page {
				t.Fatalf("both references on page %d: the test needs them apart", refs[0].Page)
			}
			checkBacklinks(t, out, words, refs)
		})
	}
}

// TestFootnoteBacklinkFirstLine: a reference on the document's first line
// gets a live back link too. The themes set body { margin: 0 } and
// sup { line-height: 0 }, so the raised reference pokes above the page's
// content box, and Chromium wrote no destination for it: its ↩ led
// nowhere, in both themes.
func TestFootnoteBacklinkFirstLine(t *testing.T) {
	pdfcheck.Require(t)
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf not installed")
	}
	md := "First[^a] line, its reference at the very top.\n\nMore text.\n\n[^a]: The note.\n"
	for _, backend := range backends(t) {
		for _, theme := range []string{"basic", "modern"} {
			t.Run(backend+"/"+theme, func(t *testing.T) {
				pdf, out := renderThemed(t, md, backend, theme)
				words := pdfcheck.Words(t, pdf)
				checkBacklinks(t, out, words, []pdfcheck.Word{findWord(t, words, "First")})
			})
		}
	}
}

// renderThemed renders md with mdpress render in theme, without page
// numbers, and returns the PDF and its path.
func renderThemed(t *testing.T, md, backend, theme string) ([]byte, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "notes.pdf")
	cmd := exec.Command(filepath.Join(binDir, "mdpress"), "render", "-", "-o", out, "--backend", backend,
		"--theme", theme, "--numbering", "none", "--plugin-dir", filepath.Join(binDir, "plugins"), "--data-dir", t.TempDir())
	cmd.Env = cleanEnv()
	cmd.Stdin = strings.NewReader(md)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("render: %v\n%s", err, msg)
	}
	pdf, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return pdf, out
}

// findWord returns the first word of the PDF that starts with text.
func findWord(t *testing.T, words []pdfcheck.Word, text string) pdfcheck.Word {
	t.Helper()
	for _, w := range words {
		if strings.HasPrefix(w.Text, text) {
			return w
		}
	}
	t.Fatalf("no word %q in the PDF", text)
	return pdfcheck.Word{}
}

// wordIs returns the word of words whose text is text.
func wordIs(t *testing.T, words []pdfcheck.Word, text string) pdfcheck.Word {
	t.Helper()
	for _, w := range words {
		if w.Text == text {
			return w
		}
	}
	t.Fatalf("no word %q in the PDF", text)
	return pdfcheck.Word{}
}

// checkBacklinks checks that the PDF at out draws one ↩ per reference, in
// the order of refs, and that each leads to the page of its reference, in
// view of it.
func checkBacklinks(t *testing.T, out string, words []pdfcheck.Word, refs []pdfcheck.Word) {
	t.Helper()
	var arrows []pdfcheck.Word
	for _, w := range words {
		if strings.HasPrefix(w.Text, "↩") {
			arrows = append(arrows, w)
		}
	}
	if len(arrows) != len(refs) {
		t.Fatalf("%d back links drawn, want %d", len(arrows), len(refs))
	}
	links := pdfLinks(t, out)
	for i, a := range arrows {
		l, ok := linkAt(links, a)
		if !ok {
			t.Errorf("back link %d (page %d) is not a link to a place in the document", i+1, a.Page)
			continue
		}
		ref := refs[i]
		top := ref.PageH - ref.YMin // the reference's top, in PDF space
		// Chromium's destinations sit a page margin above the
		// element; within an inch keeps the reference in view.
		if l.destPage != ref.Page || l.destY < top-2 || l.destY > top+72 {
			t.Errorf("back link %d leads to page %d y %.0f, want the reference %q on page %d, top at y %.0f",
				i+1, l.destPage, l.destY, ref.Text, ref.Page, top)
		}
	}
}

// pdfLink is a link annotation that leads to a place in the document.
type pdfLink struct {
	page     int        // 1-based page the annotation is on
	rect     [4]float64 // in PDF space
	destPage int
	destY    float64
}

// pdfLinks reads the PDF at path with qpdf and returns its links to places
// in the document, explicit destinations and named ones (Chromium's).
func pdfLinks(t *testing.T, path string) []pdfLink {
	t.Helper()
	raw, err := exec.Command("qpdf", "--json", path).Output()
	if err != nil {
		t.Fatalf("qpdf --json: %v", err)
	}
	var doc struct {
		QPDF []map[string]any `json:"qpdf"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.QPDF) < 2 {
		t.Fatalf("qpdf --json: %v", err)
	}
	objs := doc.QPDF[1]
	deref := func(v any) any {
		if s, ok := v.(string); ok && strings.HasSuffix(s, " R") {
			v = objs["obj:"+s]
		}
		if m, ok := v.(map[string]any); ok {
			if inner, ok := m["value"]; ok && len(m) == 1 {
				return inner
			}
		}
		return v
	}
	dict := func(v any) map[string]any { m, _ := deref(v).(map[string]any); return m }
	list := func(v any) []any { l, _ := deref(v).([]any); return l }
	num := func(v any) float64 { f, _ := v.(float64); return f }

	var pages []string // page object references in order
	var walk func(ref string)
	walk = func(ref string) {
		n := dict(ref)
		if n["/Type"] == "/Page" {
			pages = append(pages, ref)
			return
		}
		for _, k := range list(n["/Kids"]) {
			walk(k.(string))
		}
	}
	root := dict(dict(objs["trailer"])["/Root"])
	walk(root["/Pages"].(string))
	pageNo := map[string]int{}
	for i, p := range pages {
		pageNo[p] = i + 1
	}
	named := dict(root["/Dests"])

	var links []pdfLink
	for i, p := range pages {
		for _, a := range list(dict(p)["/Annots"]) {
			an := dict(a)
			if an["/Subtype"] != "/Link" {
				continue
			}
			dest := an["/Dest"]
			if act := dict(an["/A"]); act != nil && act["/S"] == "/GoTo" {
				dest = act["/D"]
			}
			if name, ok := dest.(string); ok && !strings.HasSuffix(name, " R") {
				dest = named[name]
			}
			d := list(dest)
			if len(d) < 4 {
				continue
			}
			r := list(an["/Rect"])
			if len(r) != 4 {
				continue
			}
			ref, _ := d[0].(string)
			links = append(links, pdfLink{page: i + 1, rect: [4]float64{num(r[0]), num(r[1]), num(r[2]), num(r[3])},
				destPage: pageNo[ref], destY: num(d[3])})
		}
	}
	return links
}

// linkAt returns the link whose area holds the centre of word w.
func linkAt(links []pdfLink, w pdfcheck.Word) (pdfLink, bool) {
	x, y := (w.XMin+w.XMax)/2, w.PageH-(w.YMin+w.YMax)/2
	for _, l := range links {
		x0, x1 := min(l.rect[0], l.rect[2]), max(l.rect[0], l.rect[2])
		y0, y1 := min(l.rect[1], l.rect[3]), max(l.rect[1], l.rect[3])
		if l.page == w.Page && x >= x0 && x <= x1 && y >= y0 && y <= y1 {
			return l, true
		}
	}
	return pdfLink{}, false
}
