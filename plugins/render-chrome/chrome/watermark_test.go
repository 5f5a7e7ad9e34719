package chrome

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/plugins/render-chrome/chrome/watermark"
	"github.com/mdpress/mdpress/sdk/stage"
)

const mark = "mdpress free plan"

// renderMarked renders p with the watermark text wm (none when empty) and
// the text area's margins.
func renderMarked(t testing.TB, r *Renderer, p doc, wm string, margins [4]float64) *stage.RenderResponse {
	t.Helper()
	if p.size.Name == "" {
		p.size, _ = papers.Lookup("A4")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := r.Render(ctx, &stage.RenderRequest{HTML: p.html(), Page: p.size, Watermark: wm,
		Tokens: stage.Tokens{Margins: margins}})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return res
}

// grey is one page rasterised in grey.
type grey struct {
	w, h int
	pix  []byte
}

// rasterize renders every page of pdf in grey at dpi.
func rasterize(t testing.TB, pdf []byte, dpi int) []grey {
	t.Helper()
	needTool(t, "pdftoppm")
	dir := t.TempDir()
	out := filepath.Join(dir, "p")
	if b, err := exec.Command("pdftoppm", "-r", fmt.Sprint(dpi), "-gray", writePDF(t, pdf), out).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, b)
	}
	files, _ := filepath.Glob(out + "*.pgm")
	slices.Sort(files) // pdftoppm pads the numbers to the same width
	pages := make([]grey, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var g grey
		var magic string
		var maxval int
		if _, err := fmt.Sscan(string(b[:min(len(b), 40)]), &magic, &g.w, &g.h, &maxval); err != nil || magic != "P5" || maxval != 255 || len(b) < g.w*g.h {
			t.Fatalf("%s: not an 8-bit PGM (%v)", f, err)
		}
		g.pix = b[len(b)-g.w*g.h:]
		pages = append(pages, g)
	}
	return pages
}

// differing is the fraction of pixels that differ between a and b within
// the box x0..x1, y0..y1 (fractions of the page), and the box around all
// differing pixels of the page (in pixels).
func differing(a, b grey, x0, y0, x1, y1 float64) (frac float64, box [4]int) {
	if a.w != b.w || a.h != b.h {
		return 1, box
	}
	box = [4]int{a.w, a.h, -1, -1}
	n, in := 0, 0
	for y := range a.h {
		for x := range a.w {
			i := y*a.w + x
			inside := float64(x) >= x0*float64(a.w) && float64(x) < x1*float64(a.w) && float64(y) >= y0*float64(a.h) && float64(y) < y1*float64(a.h)
			if inside {
				in++
			}
			if a.pix[i] == b.pix[i] {
				continue
			}
			if inside {
				n++
			}
			box = [4]int{min(box[0], x), min(box[1], y), max(box[2], x), max(box[3], y)}
		}
	}
	return float64(n) / float64(max(in, 1)), box
}

// marked reports whether a page's text holds the mark: drawn diagonally,
// it comes out a glyph or two a line, so white space is ignored.
func marked(page, text string) bool {
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	return strings.Contains(squeeze(page), squeeze(text))
}

// rawPages is pdftotext's text of each page, in content-stream order.
func rawPages(t testing.TB, pdf []byte) []string {
	t.Helper()
	out := run(t, "pdftotext", "-raw", writePDF(t, pdf), "-")
	return strings.Split(strings.TrimRight(out, "\f\n"), "\f")
}

// minMarkFrac is the least fraction of the pixels around the page centre
// that the mark must change. It changes about 11% of them on a white A4
// page at 36 dpi; a hidden or missing mark changes none.
const minMarkFrac = 0.03

// TestWatermarkSurvivesHostileCSS renders documents whose CSS hides,
// shrinks, clips, covers or blanks what the page shows, each with and
// without the watermark: the mark changes the middle of every page all
// the same, and pdftotext reads it there.
func TestWatermarkSurvivesHostileCSS(t *testing.T) {
	needTool(t, "pdftoppm")
	needTool(t, "pdftotext")
	r := sharedRenderer(t)
	tricks := []struct{ name, css string }{
		{"zoom", `html { zoom: 0.01 !important }`},
		{"clip-path", `html, body { clip-path: inset(50%) !important }`},
		{"text fill transparent", `html { -webkit-text-fill-color: transparent !important }`},
		{"first child hidden", `body > div:first-child, body > *:first-child { display: none !important }`},
		{"opacity", `html { opacity: 0 !important }`},
		{"filter", `html { filter: opacity(0) brightness(10) !important }`},
		{"transform", `html { transform: scale(0) !important } body { transform: translate(-300vw) rotate(180deg) !important }`},
		{"page margins", `@page { margin: 0 !important } @page :first { margin: 300pt 250pt !important }`},
		{"white overlay", `body::after { content: ""; position: fixed; inset: -100vh -100vw; background: #fff; z-index: 2147483647 }`},
		{"black page", `html, body { background: #000 !important; color: #000 }`},
		// The mark's own grey, which its fill alone is invisible on.
		{"page in the mark's grey", `@page { background: rgb(120, 120, 120) } html, body { background: rgb(120, 120, 120) !important; color: rgb(120, 120, 120) }`},
		{"page in a light grey", `html, body { background: rgb(188, 188, 188) !important }`},
		{"fixed elements hidden", `[style*="fixed"], [aria-hidden], div { display: none !important; visibility: hidden !important }`},
	}
	var all []string
	for _, tr := range tricks {
		all = append(all, tr.css)
	}
	tricks = append(tricks, struct{ name, css string }{"all at once", strings.Join(all, "\n")})
	body := "<div>first child</div>" + strings.Repeat("<p>"+strings.Repeat("Text the document wants unmarked. ", 20)+"</p>\n", 12)
	for _, tr := range tricks {
		t.Run(tr.name, func(t *testing.T) {
			p := doc{numbering: "bottom-center", css: tr.css, body: body}
			plain := renderMarked(t, r, p, "", [4]float64{})
			stamped := renderMarked(t, r, p, mark, [4]float64{})
			if plain.Pages != stamped.Pages {
				t.Fatalf("%d pages without the watermark, %d with", plain.Pages, stamped.Pages)
			}
			before, after := rasterize(t, plain.PDF, 36), rasterize(t, stamped.PDF, 36)
			if len(after) != stamped.Pages || len(before) != len(after) {
				t.Fatalf("%d and %d pages rasterised, %d printed", len(before), len(after), stamped.Pages)
			}
			texts := rawPages(t, stamped.PDF)
			var fracs []string
			for i := range after {
				frac, _ := differing(before[i], after[i], 0.3, 0.35, 0.7, 0.65)
				fracs = append(fracs, fmt.Sprintf("%.1f%%", 100*frac))
				if frac < minMarkFrac {
					t.Errorf("page %d of %d: the watermark changes %.1f%% of the page's middle, want at least %.0f%%",
						i+1, len(after), 100*frac, 100*minMarkFrac)
				}
				if i >= len(texts) || !marked(texts[i], mark) {
					t.Errorf("page %d: pdftotext finds no %q", i+1, mark)
				}
			}
			t.Logf("%d pages; the mark changes %s of their middles", len(after), strings.Join(fracs, ", "))
		})
	}
}

// TestWatermarkEveryPage: a long document gets the mark on every page,
// centred on the text area the margins leave, and keeps its pages, their
// size, its text and a sound structure.
func TestWatermarkEveryPage(t *testing.T) {
	needTool(t, "qpdf")
	r := sharedRenderer(t)
	var body strings.Builder
	for i := range 40 {
		fmt.Fprintf(&body, "<h2>Section %d</h2><p>Paragraph %d: %s</p>\n", i, i, strings.Repeat("words to fill the page ", 12))
	}
	a5, _ := papers.Lookup("A5")
	p := doc{size: a5, numbering: "bottom-center", body: body.String()}
	// Uneven margins move the text area's centre 50 pt right and 30 pt
	// down from the page's.
	margins := [4]float64{100, 20, 40, 120}
	plain := renderMarked(t, r, p, "", margins)
	stamped := renderMarked(t, r, p, mark, margins)
	if stamped.Pages < 5 || stamped.Pages != plain.Pages {
		t.Fatalf("%d pages with the watermark, %d without; want the same, at least 5", stamped.Pages, plain.Pages)
	}
	if out := run(t, "qpdf", "--check", writePDF(t, stamped.PDF)); !strings.Contains(out, "No syntax or stream encoding errors") {
		t.Fatalf("qpdf --check:\n%s", out)
	}
	pi, si := pdfInfo(t, plain.PDF), pdfInfo(t, stamped.PDF)
	if pi["Pages"] != si["Pages"] || pi["Page size"] != si["Page size"] || si["Pages"] != fmt.Sprint(stamped.Pages) {
		t.Fatalf("pdfinfo: %s pages of %s without the mark, %s pages of %s with; Render said %d",
			pi["Pages"], pi["Page size"], si["Pages"], si["Page size"], stamped.Pages)
	}
	if w, h := pdfPageSize(t, si); math.Abs(w-a5.WidthPt) > 1 || math.Abs(h-a5.HeightPt) > 1 {
		t.Errorf("page size %gx%g pt, want %.2fx%.2f", w, h, a5.WidthPt, a5.HeightPt)
	}
	texts := rawPages(t, stamped.PDF)
	if len(texts) != stamped.Pages {
		t.Fatalf("%d pages of text, %d printed", len(texts), stamped.Pages)
	}
	for i, text := range texts {
		if !marked(text, mark) {
			t.Errorf("page %d: pdftotext finds no %q", i+1, mark)
		}
		if !strings.Contains(text, "Paragraph") || !strings.Contains(text, "words to fill the page") {
			t.Errorf("page %d lost its own text:\n%.300s", i+1, text)
		}
	}
	const dpi = 36
	before, after := rasterize(t, plain.PDF, dpi), rasterize(t, stamped.PDF, dpi)
	ptPerPx := 72.0 / dpi
	for i := range after {
		frac, box := differing(before[i], after[i], 0.3, 0.35, 0.7, 0.65)
		if frac < minMarkFrac/2 { // the page's text takes some of the middle
			t.Errorf("page %d: the watermark changes %.1f%% of the page's middle", i+1, 100*frac)
		}
		cx := float64(box[0]+box[2]) / 2 * ptPerPx
		cy := float64(box[1]+box[3]) / 2 * ptPerPx
		wantX, wantY := (margins[3]+a5.WidthPt-margins[1])/2, (margins[0]+a5.HeightPt-margins[2])/2
		if math.Abs(cx-wantX) > 10 || math.Abs(cy-wantY) > 10 {
			t.Errorf("page %d: the mark centres on %.0f,%.0f pt, want the text area's centre %.0f,%.0f", i+1, cx, cy, wantX, wantY)
		}
	}
}

// TestWatermarkRichDocument stamps what a document prints beyond text:
// images, links out and within, bookmarks, a table, a landscape page
// among portrait ones. The stamp changes nothing of it: qpdf finds the
// file sound, the pages, their sizes, links, destinations, bookmarks and
// text are those of the unmarked print, and so is the structure tree,
// for the mark is an artifact; and the mark is on every page.
func TestWatermarkRichDocument(t *testing.T) {
	needTool(t, "qpdf")
	needTool(t, "pdfinfo")
	r := sharedRenderer(t)
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var jpg, pngb bytes.Buffer
	if err := jpeg.Encode(&jpg, img, nil); err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(&pngb, img); err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	for i := range 4 {
		wide := ""
		if i == 2 {
			wide = ` class="wide"`
		}
		fmt.Fprintf(&body, `<section%s><h1 id="c%d">Chapter %d (a \) paren</h1><h2>Part %d.1</h2>
<p>Words of chapter %d, <a href="https://example.test/%d?q=(x)">out</a> and <a href="#c%d">back</a>.</p>
<p><img alt="png" src="data:image/png;base64,%s"> <img alt="jpeg" src="data:image/jpeg;base64,%s"></p>
<table><tr><th>Head %d</th><td>cell endobj stream</td></tr></table></section>`,
			wide, i, i, i, i, i, max(i-1, 0), base64.StdEncoding.EncodeToString(pngb.Bytes()), base64.StdEncoding.EncodeToString(jpg.Bytes()), i)
	}
	p := doc{numbering: "bottom-center", body: body.String(),
		css: `@page wide { size: A4 landscape } .wide { page: wide } section { break-after: page }`}
	if res := renderMarked(t, r, p, mark, [4]float64{}); res.Pages != 4 {
		t.Fatalf("%d pages with the watermark, want 4", res.Pages)
	}
	// The same print, unmarked and stamped: two prints differ in their
	// dates and structure element ids.
	plain := renderMarked(t, r, p, "", [4]float64{})
	pdf, err := watermark.Stamp(plain.PDF, watermark.Mark{Text: mark})
	if err != nil {
		t.Fatal(err)
	}
	if out := run(t, "qpdf", "--check", writePDF(t, pdf)); !strings.Contains(out, "No syntax or stream encoding errors") {
		t.Fatalf("qpdf --check:\n%s", out)
	}
	fileSize := regexp.MustCompile(`(?m)^File size:.*$`) // the one thing that must change
	same := func(what string, args ...string) {
		t.Helper()
		a := fileSize.ReplaceAllString(run(t, args[0], append(args[1:], writePDF(t, plain.PDF))...), "")
		b := fileSize.ReplaceAllString(run(t, args[0], append(args[1:], writePDF(t, pdf))...), "")
		if a != b {
			t.Errorf("%s changed:\n%s\nstamped:\n%s", what, a, b)
		}
	}
	same("pages, sizes and tagging", "pdfinfo", "-f", "1", "-l", "4")
	same("links", "pdfinfo", "-url")
	same("destinations", "pdfinfo", "-dests")
	same("the structure tree's text", "pdfinfo", "-struct-text")
	same("bookmarks", "qpdf", "--json", "--json-key=outlines")
	if info := pdfInfo(t, pdf); info["Tagged"] != "yes" {
		t.Errorf("pdfinfo Tagged = %q, want yes", info["Tagged"])
	}
	plainTexts, texts := rawPages(t, plain.PDF), rawPages(t, pdf)
	before, after := rasterize(t, plain.PDF, 36), rasterize(t, pdf, 36)
	for i := range after {
		if !marked(texts[i], mark) {
			t.Errorf("page %d: pdftotext finds no %q", i+1, mark)
		}
		for line := range strings.Lines(plainTexts[i]) {
			if !marked(texts[i], line) {
				t.Errorf("page %d lost %q", i+1, line)
			}
		}
		if frac, _ := differing(before[i], after[i], 0.3, 0.35, 0.7, 0.65); frac < minMarkFrac/2 {
			t.Errorf("page %d: the watermark changes %.1f%% of the page's middle", i+1, 100*frac)
		}
	}
}

// TestPageCountIgnoresDocumentText: what the document writes into the
// PDF as it is, link URIs, bookmark titles and a JPEG's comment, does not
// add pages to the count, with the watermark or without.
func TestPageCountIgnoresDocumentText(t *testing.T) {
	r := sharedRenderer(t)
	img := image.NewRGBA(image.Rect(0, 0, 32, 32))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, img, nil); err != nil {
		t.Fatal(err)
	}
	// A comment segment right after the start of image, which Chromium
	// copies into the PDF with the rest of the JPEG.
	comment := []byte(strings.Repeat("\n9 0 obj\n<</Type /Page>>\nendobj\n", 10))
	withComment := append([]byte{0xff, 0xd8, 0xff, 0xfe, byte((len(comment) + 2) >> 8), byte(len(comment) + 2)}, comment...)
	withComment = append(withComment, jpg.Bytes()[2:]...)
	var body strings.Builder
	for i := range 10 {
		fmt.Fprintf(&body, `<h2>/Type /Page %d</h2><p><a href="https://example.test/Type/Page/%d">/Type/Page</a></p>`, i, i)
	}
	fmt.Fprintf(&body, `<img src="data:image/jpeg;base64,%s">`, base64.StdEncoding.EncodeToString(withComment))
	for _, wm := range []string{"", mark} {
		res := renderMarked(t, r, doc{body: body.String()}, wm, [4]float64{})
		if got := pdfInfo(t, res.PDF)["Pages"]; got != strconv.Itoa(res.Pages) {
			t.Errorf("watermark %q: Render says %d pages, pdfinfo %s", wm, res.Pages, got)
		}
	}
}

// TestStampOnlyWhenAsked: without a watermark the PDF is what Chromium
// printed, its document information rewritten in place, for the stamp is
// never called; with one it is the stamp's rewrite of those bytes, which holds no prefix that is
// the unmarked print, and a stamp that fails fails the render.
func TestStampOnlyWhenAsked(t *testing.T) {
	var calls int
	var printed, stamped []byte
	var fail error
	r := newRenderer(t, `{"tabs":1}`, func(o *options) {
		o.stamp = func(pdf []byte, m watermark.Mark) ([]byte, error) {
			calls++
			if fail != nil {
				return nil, fail
			}
			if m.Text != mark || m.Margins != [4]float64{1, 2, 3, 4} {
				t.Errorf("stamped %+v", m)
			}
			printed = bytes.Clone(pdf)
			out, err := watermark.Stamp(pdf, m)
			stamped = out
			return out, err
		}
	})
	a4, _ := papers.Lookup("A4")
	p := doc{size: a4, body: "<p>Plain</p>"}

	res := renderMarked(t, r, p, "", [4]float64{1, 2, 3, 4})
	if calls != 0 {
		t.Fatalf("the stamp ran %d times for a document without a watermark", calls)
	}
	if n := bytes.Count(res.PDF, []byte("%%EOF")); n != 1 || bytes.Contains(res.PDF, []byte("MdpressWatermark")) {
		t.Fatalf("an unmarked PDF has %d %%%%EOF and holds the mark's resources: it was updated", n)
	}

	res = renderMarked(t, r, p, mark, [4]float64{1, 2, 3, 4})
	if calls != 1 {
		t.Fatalf("the stamp ran %d times, want 1", calls)
	}
	if !bytes.Equal(res.PDF, stamped) {
		t.Fatal("the marked PDF is not the stamp's output")
	}
	// Chromium writes its file in one piece: one %%EOF, at the end. The
	// stamp rewrites it into one piece again, rather than append to it.
	if bytes.Count(printed, []byte("%%EOF")) != 1 || bytes.Count(res.PDF, []byte("%%EOF")) != 1 ||
		bytes.HasPrefix(res.PDF, printed[:bytes.Index(printed, []byte("%%EOF"))]) {
		t.Fatal("the marked PDF holds Chromium's print as a prefix, or more than one end of file marker")
	}

	fail = errors.New("boom")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := r.Render(ctx, &stage.RenderRequest{HTML: p.html(), Page: p.size, Watermark: mark})
	var se *stage.Error
	if !errors.As(err, &se) || se.Code != stage.CodeInternal || strings.Contains(se.Message, "boom") {
		t.Fatalf("a failed stamp gave %v, want an internal error with a safe message", err)
	}
}

// BenchmarkStampPrinted is the stamp's cost on PDFs Chromium printed: one
// page and fifty.
//
//	go test ./plugins/render-chrome/chrome/ -run '^$' -bench StampPrinted -benchmem
func BenchmarkStampPrinted(b *testing.B) {
	r := sharedRenderer(b)
	for _, pages := range []int{1, 50} {
		var body strings.Builder
		for i := range pages {
			fmt.Fprintf(&body, `<h2>Page %d</h2><p>%s</p><div style="break-after: page"></div>`, i+1, strings.Repeat("Some prose on the page. ", 40))
		}
		res := renderMarked(b, r, doc{numbering: "bottom-center", body: body.String()}, "", [4]float64{})
		if res.Pages != pages {
			b.Fatalf("printed %d pages, want %d", res.Pages, pages)
		}
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := watermark.Stamp(res.PDF, watermark.Mark{Text: mark, Margins: [4]float64{54, 54, 62, 54}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
