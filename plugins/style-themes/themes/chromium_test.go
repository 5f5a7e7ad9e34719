package themes

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mdpress/mdpress/sdk/stage"
)

const chromiumPath = "/usr/lib/chromium/chromium"

func newPrinter(t *testing.T) func(html string) []byte {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no Chromium printing")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("no Chromium at %s", chromiumPath)
	}
	for _, tool := range []string{"pdftoppm", "pdftotext", "pdfinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s (poppler-utils)", tool)
		}
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath))
	alloc, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	dir := t.TempDir()
	n := 0
	return func(html string) []byte {
		t.Helper()
		n++
		path := filepath.Join(dir, fmt.Sprintf("doc%d.html", n))
		if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path)); err != nil {
			t.Fatalf("load: %v", err)
		}
		pdf, err := chromedp.Run(ctx, chromedp.PrintToPDF(chromedp.PDFPreferCSSPageSize(), chromedp.PDFPrintBackground()))
		if err != nil {
			t.Fatalf("print: %v", err)
		}
		return pdf
	}
}

// raster is one page as 8-bit RGB.
type raster struct {
	w, h int
	rgb  []byte
}

// rasterize renders every page of pdf at a low resolution.
func rasterize(t *testing.T, pdf []byte) []raster {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pdf")
	if err := os.WriteFile(in, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("pdftoppm", "-r", "40", in, filepath.Join(dir, "p")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "p-*.ppm"))
	var pages []raster
	for _, f := range files { // p-1 .. p-9 sort correctly for the page counts used here
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var w, h, maxv int
		var hdr int
		if _, err := fmt.Sscanf(string(b), "P6\n%d %d\n%d\n", &w, &h, &maxv); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		hdr = len(b) - w*h*3
		pages = append(pages, raster{w: w, h: h, rgb: b[hdr:]})
	}
	return pages
}

// differing is the share of pixels whose colour differs noticeably.
func differing(a, b raster) float64 {
	if a.w != b.w || a.h != b.h {
		return 1
	}
	n := 0
	for i := 0; i+2 < len(a.rgb); i += 3 {
		d := 0
		for k := range 3 {
			d += absInt(int(a.rgb[i+k]) - int(b.rgb[i+k]))
		}
		if d > 48 {
			n++
		}
	}
	return float64(n) / float64(a.w*a.h)
}

// reddish counts strongly red pixels.
func reddish(r raster) int {
	n := 0
	for i := 0; i+2 < len(r.rgb); i += 3 {
		if r.rgb[i] > 140 && r.rgb[i+1] < 90 && r.rgb[i+2] < 90 {
			n++
		}
	}
	return n
}

// yellowish counts the pixels of an emoji face's yellow.
func yellowish(r raster) int {
	n := 0
	for i := 0; i+2 < len(r.rgb); i += 3 {
		if r.rgb[i] > 180 && r.rgb[i+1] > 130 && r.rgb[i+2] < 90 {
			n++
		}
	}
	return n
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

var wordBox = regexp.MustCompile(`<word xMin="([0-9.]+)" yMin="([0-9.]+)" xMax="([0-9.]+)" yMax="([0-9.]+)">([^<]*)</word>`)

// pageNumberX finds the word "n" in the bottom band of page n and returns
// its centre as a share of the page width, or -1.
func pageNumberX(t *testing.T, pdf []byte, n int, page stage.PageSize, bottom float64) float64 {
	t.Helper()
	for _, w := range words(t, pdf, n) {
		if w.text == strconv.Itoa(n) && w.y0 > page.HeightPt-bottom {
			return (w.x0 + w.x1) / 2 / page.WidthPt
		}
	}
	return -1
}

// word is a word of a PDF page and its box, in points from the top left.
type word struct {
	text       string
	x0, y0, x1 float64
}

// words returns the words of page n of pdf, by pdftotext -bbox.
func words(t *testing.T, pdf []byte, n int) []word {
	t.Helper()
	cmd := exec.Command("pdftotext", "-bbox", "-f", strconv.Itoa(n), "-l", strconv.Itoa(n), "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	var ws []word
	for _, m := range wordBox.FindAllStringSubmatch(string(out), -1) {
		w := word{text: m[5]}
		w.x0, _ = strconv.ParseFloat(m[1], 64)
		w.y0, _ = strconv.ParseFloat(m[2], 64)
		w.x1, _ = strconv.ParseFloat(m[3], 64)
		ws = append(ws, w)
	}
	return ws
}

// pdfText is the text of every page of pdf.
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	cmd := exec.Command("pdftotext", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

func pdfPageSize(t *testing.T, pdf []byte) (w, h float64, pages int) {
	t.Helper()
	cmd := exec.Command("pdfinfo", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdfinfo: %v", err)
	}
	if m := regexp.MustCompile(`Page size:\s+([0-9.]+) x ([0-9.]+) pts`).FindSubmatch(out); m != nil {
		w, _ = strconv.ParseFloat(string(m[1]), 64)
		h, _ = strconv.ParseFloat(string(m[2]), 64)
	}
	if m := regexp.MustCompile(`Pages:\s+([0-9]+)`).FindSubmatch(out); m != nil {
		pages, _ = strconv.Atoi(string(m[1]))
	}
	return w, h, pages
}

// TestChromiumPrint prints styled documents with Chromium and checks what
// a reader sees: the themes differ, the user's h1 colour wins, page
// numbers sit where asked, and the page has the requested size. (The
// watermark is render-chrome's to stamp and is tested there.)
func TestChromiumPrint(t *testing.T) {
	print := newPrinter(t)
	s := New(nil)
	sample, err := os.ReadFile(filepath.Join("testdata", "sample.html"))
	if err != nil {
		t.Fatal(err)
	}
	a5 := mustPage(t, "A5")
	doc := func(theme, html string, page stage.PageSize, num stage.Numbering, wm string) []byte {
		return print(style(t, s, &stage.StyleRequest{Document: stage.Document{HTML: html, Title: "t"}, Theme: theme, Page: page, Numbering: num, Watermark: wm}))
	}

	modern := rasterize(t, doc("modern", string(sample), a5, stage.NumberingNone, ""))
	basic := rasterize(t, doc("basic", string(sample), a5, stage.NumberingNone, ""))
	t.Run("themes differ", func(t *testing.T) {
		if d := differing(modern[0], basic[0]); d < 0.03 {
			t.Errorf("only %.1f%% of the first page differs between modern and basic", 100*d)
		}
	})

	t.Run("user h1 colour wins", func(t *testing.T) {
		noUser := strings.Replace(string(sample), "h1 { color: #b91c1c; }", "", 1)
		for theme, withUser := range map[string]raster{"modern": modern[0], "basic": basic[0]} {
			without := rasterize(t, doc(theme, noUser, a5, stage.NumberingNone, ""))[0]
			if r, r0 := reddish(withUser), reddish(without); r < 30 || r0 > r/10 {
				t.Errorf("%s: %d red pixels with the user's h1 colour, %d without", theme, r, r0)
			}
		}
	})

	t.Run("page numbers", func(t *testing.T) {
		long := strings.Repeat("<p>"+strings.Repeat("Lorem ipsum dolor sit amet. ", 12)+"</p>\n", 10)
		toks, _ := s.Tokens("basic", a5)
		for num, want := range map[stage.Numbering][2]float64{
			stage.NumberingLeft: {0, 0.3}, stage.NumberingCenter: {0.4, 0.6}, stage.NumberingRight: {0.7, 1},
		} {
			x := pageNumberX(t, doc("basic", long, a5, num, ""), 2, a5, toks.Margins[2])
			if x < want[0] || x > want[1] {
				t.Errorf("numbering %s: page number 2 at %.2f of the width, want %.1f..%.1f", num, x, want[0], want[1])
			}
		}
		if x := pageNumberX(t, doc("basic", long, a5, stage.NumberingNone, ""), 2, a5, toks.Margins[2]); x >= 0 {
			t.Errorf("numbering none: a page number at %.2f of the width", x)
		}
	})

	// DejaVu Sans, ahead of the colour emoji font in the sans stack, has
	// black outlines of the emoticons: 😀 printed in black on modern,
	// beside a colour 🎉.
	t.Run("emoticons in colour", func(t *testing.T) {
		for _, theme := range []string{"modern", "basic"} {
			for _, tag := range []string{"p", "code"} {
				html := fmt.Sprintf(`<p style="font-size: 48pt"><%s>😀 😂 🙂</%s></p>`, tag, tag)
				if n := yellowish(rasterize(t, doc(theme, html, a5, stage.NumberingNone, ""))[0]); n < 70 {
					t.Errorf("%s, in <%s>: %d yellow pixels in three emoticons, want colour emoji (about 85)", theme, tag, n)
				}
			}
		}
	})

	// GitHub honours a raw HTML table's align attribute; modern's
	// text-align for cells without alignment overrode it, and a centred
	// <td align="center"> printed flush left.
	t.Run("align attribute", func(t *testing.T) {
		html := `<table style="width: 100%"><tr><td align="left">west</td><td>plain</td></tr>` +
			`<tr><td align="center">middle</td><td align="right">east</td></tr>` +
			`<tr align="right"><td>rowwise</td><td>x</td></tr></table>` +
			`<table style="width: 100%"><tr><th>head</th><th>other</th></tr></table>`
		for _, theme := range []string{"modern", "basic"} {
			pdf := doc(theme, html, a5, stage.NumberingNone, "")
			x := map[string]float64{}
			for _, w := range words(t, pdf, 1) {
				x[w.text] = (w.x0 + w.x1) / 2 / a5.WidthPt
			}
			// Two columns of a table as wide as the text: the first's
			// centre at about 0.3 of the page, the second's at 0.7.
			if x["middle"] < 0.25 || x["middle"] > 0.35 || x["east"] < 0.8 || x["west"] > 0.2 {
				t.Errorf("%s: west at %.2f, middle at %.2f, east at %.2f of the page: align attributes not honoured", theme, x["west"], x["middle"], x["east"])
			}
			// A row's align is its cells' when they have none, as in
			// render-fpdf: modern's flush left for cells without align
			// overrode the row's too.
			if x["rowwise"] < 0.38 {
				t.Errorf("%s: a cell of a <tr align=\"right\"> centred at %.2f of the page: the row's align not honoured", theme, x["rowwise"])
			}
			if theme == "modern" && x["head"] > 0.2 {
				t.Errorf("modern: a header cell without alignment at %.2f of the page, want it flush left", x["head"])
			}
		}
	})

	// A PDF cannot be clicked open: a closed <details> printed only its
	// summary, and render-fpdf prints the whole element.
	t.Run("details printed open", func(t *testing.T) {
		html := "<details>\n<summary>Install steps</summary>\n<p>Run the hiddenword installer.</p>\n</details>\n<p>After.</p>"
		for _, theme := range []string{"modern", "basic"} {
			text := pdfText(t, doc(theme, html, a5, stage.NumberingNone, ""))
			for _, want := range []string{"Install steps", "hiddenword", "After."} {
				if !strings.Contains(text, want) {
					t.Errorf("%s: the PDF lacks %q:\n%s", theme, want, text)
				}
			}
		}
	})

	t.Run("page sizes", func(t *testing.T) {
		for _, name := range []string{"Ledger", "Executive", "A9"} {
			page := mustPage(t, name)
			w, h, _ := pdfPageSize(t, doc("modern", string(sample), page, stage.NumberingCenter, "X"))
			if abs(w-page.WidthPt) > 1 || abs(h-page.HeightPt) > 1 {
				t.Errorf("%s printed %gx%g pt, want %.2fx%.2f", name, w, h, page.WidthPt, page.HeightPt)
			}
		}
	})
}
