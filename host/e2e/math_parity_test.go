package e2e

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// parityFormulas are common formulas of READMEs and technical documents.
var parityFormulas = []struct{ name, tex string }{
	{"quadratic", `x = \frac{-b \pm \sqrt{b^2-4ac}}{2a}`},
	{"euler", `e^{i\pi} + 1 = 0`},
	{"sum", `\sum_{i=1}^{n} i^2 = \frac{n(n+1)(2n+1)}{6}`},
	{"integral", `\int_0^\infty e^{-x^2}\,dx = \frac{\sqrt{\pi}}{2}`},
	{"matrix", `A = \begin{pmatrix} a & b \\ c & d \end{pmatrix}`},
	{"limit", `\lim_{x \to 0} \frac{\sin x}{x} = 1`},
	{"alphabets", `\mathcal{O}(n) = \mathbb{E}[\mathscr{L}] + \mathfrak{g}`},
	{"eqnarray", `\begin{eqnarray} a &=& \frac{1}{2} \\ b + c &\le& d \end{eqnarray}`},
}

// formulaInk renders each formula as display math between the words
// Above and Below and returns, per formula, the height and width of its
// ink in ems of the text (the height of the word Above's box), and
// whether the monospace face (math printed as source) was used.
func formulaInk(t *testing.T, backend string) (map[string][2]float64, bool) {
	t.Helper()
	var md strings.Builder
	for _, f := range parityFormulas {
		fmt.Fprintf(&md, "Above%s\n\n$$\n%s\n$$\n\nBelow%s\n\n", f.name, f.tex, f.name)
	}
	h := startHost(t, withArgs("--backend", backend))
	defer h.stop()
	_, key := h.account("pro", -1)
	resp, pdf := h.post(key, map[string]string{"markdown": md.String(), "pageNumeration": "none", "theme": "basic"})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
	}
	words := pdfcheck.Words(t, pdf)
	find := func(s string) pdfcheck.Word { t.Helper(); return wordIs(t, words, s) }
	out := map[string][2]float64{}
	pages := map[int]raster{}
	for _, f := range parityFormulas {
		above, below := find("Above"+f.name), find("Below"+f.name)
		if above.Page != below.Page {
			t.Fatalf("%s: %s breaks across pages", backend, f.name)
		}
		img, ok := pages[above.Page]
		if !ok {
			dpi := 144
			w, hgt, pix := pdfcheck.PPM(t, pdf, above.Page, dpi)
			img = raster{w: w, h: hgt, pix: pix, scale: float64(dpi) / 72}
			pages[above.Page] = img
		}
		y0, y1 := int((above.YMax+1)*img.scale), int((below.YMin-1)*img.scale)
		top, bottom, left, right := -1, -1, img.w, -1
		for y := y0; y <= y1; y++ {
			for x := range img.w {
				if dark(img.at(x, y)) {
					if top < 0 {
						top = y
					}
					bottom = y
					left, right = min(left, x), max(right, x)
				}
			}
		}
		if top < 0 {
			t.Errorf("%s: no ink for %s", backend, f.name)
			continue
		}
		em := (above.YMax - above.YMin) * img.scale
		out[f.name] = [2]float64{float64(bottom-top+1) / em, float64(right-left+1) / em}
	}
	return out, strings.Contains(fontsOf(t, pdf), "Mono")
}

// TestMathParity lays out common formulas on both backends and compares
// their shapes loosely: each formula's ink, measured in ems of the text
// around it, is about as tall and as wide on render-fpdf as Chromium lays
// it out from the same MathML (within 35% in height, 50% in width: the
// fonts differ, DejaVu Serif against DejaVu Math TeX Gyre). render-fpdf
// printed them as one line of TeX, a third as tall as a fraction and
// several times as wide.
func TestMathParity(t *testing.T) {
	pdfcheck.Require(t)
	if !chromiumAvailable() {
		t.Skip("chromium not installed: nothing to compare render-fpdf with")
	}
	fp, mono := formulaInk(t, "fpdf")
	if mono {
		t.Error("render-fpdf printed a formula as source")
	}
	ch, _ := formulaInk(t, "chrome")
	for _, f := range parityFormulas {
		a, b := fp[f.name], ch[f.name]
		t.Logf("%-10s fpdf %.2f x %.2f em, chrome %.2f x %.2f em", f.name, a[0], a[1], b[0], b[1])
		if b[0] == 0 || b[1] == 0 {
			continue
		}
		if r := a[0] / b[0]; r < 0.65 || r > 1.35 {
			t.Errorf("%s: height %.2f em on render-fpdf, %.2f on Chromium", f.name, a[0], b[0])
		}
		if r := a[1] / b[1]; r < 0.5 || r > 1.5 {
			t.Errorf("%s: width %.2f em on render-fpdf, %.2f on Chromium", f.name, a[1], b[1])
		}
	}
}

// TestMathHostileNesting: \frac nested as deep as the parser's 8 KiB of
// TeX per formula allow is rendered by render-fpdf quickly, as its
// source, and a formula nested within the layout's depth is laid out.
func TestMathHostileNesting(t *testing.T) {
	pdfcheck.Require(t)
	n := (8<<10 - 16) / 10
	deep := strings.Repeat(`\frac{1}{1+`, n) + "x" + strings.Repeat("}", n)
	h := startHost(t, withArgs("--backend", "fpdf"))
	defer h.stop()
	_, key := h.account("pro", -1)
	start := time.Now()
	resp, pdf := h.post(key, map[string]string{"markdown": "$$\n" + deep + "\n$$\n\nAfter.\n", "pageNumeration": "none"})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
	text := strings.Join(strings.Fields(pdfcheck.Text(t, pdf)), "")
	if !strings.Contains(text, `\frac{1}{1+\frac{1}{1+`) || !strings.Contains(text, "After.") {
		t.Errorf("the deep formula's source or the text after it is missing: %.300s", text)
	}
	shallow := strings.Repeat(`\frac{1}{1+`, 8) + "x" + strings.Repeat("}", 8)
	resp, pdf = h.post(key, map[string]string{"markdown": "$$\n" + shallow + "\n$$\n", "pageNumeration": "none"})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
	}
	if strings.Contains(fontsOf(t, pdf), "Mono") {
		t.Error("a continued fraction 8 deep was printed as source")
	}
}

// TestMathTagParity: a display formula numbered with \tag{1}, as a block
// and inside a paragraph, is laid out on both backends with (1) at the
// right margin, level with the formula, which stays centred, as MathJax
// (GitHub's math) draws it. Both backends printed the formula as its
// source.
func TestMathTagParity(t *testing.T) {
	pdfcheck.Require(t)
	md := "Above1\n\n$$\nE = mc^2 \\tag{1}\n$$\n\nBelow1\n\nAbove2 $$E = mc^2 \\tag{1}$$ Below2\n"
	mathOnBackends(t, md, nil, func(t *testing.T, backend string, pdf []byte) {
		words := pdfcheck.Words(t, pdf)
		dpi := 144
		w, hgt, pix := pdfcheck.PPM(t, pdf, 1, dpi)
		img := raster{w: w, h: hgt, pix: pix, scale: float64(dpi) / 72}
		for _, n := range []string{"1", "2"} {
			above, below := wordIs(t, words, "Above"+n), wordIs(t, words, "Below"+n)
			left := above.XMin
			right := float64(img.w)/img.scale - left // the themes' margins are even
			// The ink's columns between the two words, in points.
			ink := make([]bool, img.w)
			for y := int((above.YMax + 1) * img.scale); y < int((below.YMin-1)*img.scale); y++ {
				for x := range img.w {
					if dark(img.at(x, y)) {
						ink[x] = true
					}
				}
			}
			// Runs of ink closer than 20 pt are one: the formula, then
			// the tag.
			var runs [][2]float64
			gap := int(20 * img.scale)
			for x := 0; x < img.w; x++ {
				if !ink[x] {
					continue
				}
				if k := len(runs); k > 0 && float64(x)/img.scale-runs[k-1][1] < float64(gap)/img.scale {
					runs[k-1][1] = float64(x) / img.scale
				} else {
					runs = append(runs, [2]float64{float64(x) / img.scale, float64(x) / img.scale})
				}
			}
			if len(runs) != 2 {
				t.Fatalf("formula %s: ink in %d runs %v, want the formula and its tag", n, len(runs), runs)
			}
			formula, tag := runs[0], runs[1]
			if mid := (formula[0] + formula[1]) / 2; mid < (left+right)/2-6 || mid > (left+right)/2+6 {
				t.Errorf("formula %s centred at %.1f, the column at %.1f", n, mid, (left+right)/2)
			}
			if tag[1] < right-4 || tag[1] > right+1 || tag[1]-tag[0] > 20 {
				t.Errorf("formula %s: tag's ink %.1f-%.1f, want (1) ending at the margin %.1f", n, tag[0], tag[1], right)
			}
		}
	})
}

// TestMathTagNoRoom: on a narrow page, a tag with no room beside its
// formula goes under it, flush right, whole, on both backends. Chromium
// ran it past the margin, where the theme cut it off, "(Pythagoras, gen"
// printed and extracted; render-fpdf drew it over the formula.
func TestMathTagNoRoom(t *testing.T) {
	pdfcheck.Require(t)
	md := "Above\n\n$$\n\\sum_{i=1}^{n} x_i^2 + y_i^2 + w_i^2 + v_i^2 = z \\tag{Pythagoras, general form}\n$$\n\nBelow\n"
	mathOnBackends(t, md, map[string]string{"pageSize": "A6"}, func(t *testing.T, backend string, pdf []byte) {
		words := pdfcheck.Words(t, pdf)
		above, below := wordIs(t, words, "Above"), wordIs(t, words, "Below")
		left := above.XMin
		right := above.PageW - left // the themes' margins are even
		if backend == "chrome" {
			// render-fpdf's text for a formula is its TeX, tag and all.
			if tag := wordIs(t, words, "form)"); tag.XMax > right+1 {
				t.Errorf("the tag ends at %.1f, past the margin at %.1f", tag.XMax, right)
			}
		}
		// The ink between the two words: the formula's rows, then
		// the tag's, which overlap no column of the formula's in the
		// rows they share.
		dpi := 144
		w, hgt, pix := pdfcheck.PPM(t, pdf, 1, dpi)
		img := raster{w: w, h: hgt, pix: pix, scale: float64(dpi) / 72}
		type span struct{ x0, x1 int }
		var rows []span // per pixel row, its ink's extent; x0 > x1 for none
		for y := int((above.YMax + 1) * img.scale); y < int((below.YMin-1)*img.scale); y++ {
			s := span{img.w, -1}
			for x := range img.w {
				if dark(img.at(x, y)) {
					s.x0, s.x1 = min(s.x0, x), max(s.x1, x)
				}
			}
			rows = append(rows, s)
		}
		// The tag's block is the last run of inked rows; the
		// formula's, those before it.
		end := len(rows)
		for end > 0 && rows[end-1].x1 < 0 {
			end--
		}
		start := end
		for start > 0 && rows[start-1].x1 >= 0 {
			start--
		}
		tagRows, formulaRows := rows[start:end], rows[:start]
		formulaInk := 0
		for _, r := range formulaRows {
			if r.x1 >= 0 {
				formulaInk++
			}
		}
		if formulaInk == 0 {
			t.Fatalf("the formula and its tag on one line: want the tag under it")
		}
		tagRight := 0
		for _, r := range tagRows {
			tagRight = max(tagRight, r.x1)
		}
		if x := float64(tagRight) / img.scale; x < right-4 || x > right+1 {
			t.Errorf("the tag's ink ends at %.1f, want it at the margin %.1f", x, right)
		}
	})
}

// TestMathRowsParity: an align numbered per row and a multline are laid
// out alike on both backends, as MathJax draws them: each row's tag ends
// at the right margin, level with its row, and multline's first row
// starts about an em from the left margin, its last ends about an em
// from the right. Both backends printed the two formulas as source.
func TestMathRowsParity(t *testing.T) {
	pdfcheck.Require(t)
	md := "Above1\n\n$$\n\\begin{align}\na &= \\frac{1}{2} \\tag{1} \\\\\nb + c &= d \\\\\ne &= f + g \\tag{2}\n\\end{align}\n$$\n\nBelow1\n\n" +
		"Above2\n\n$$\n\\begin{multline}\na + b + c \\\\\n+ d + e \\\\\n+ f = 0\n\\end{multline}\n$$\n\nBelow2\n"
	mathOnBackends(t, md, nil, func(t *testing.T, backend string, pdf []byte) {
		words := pdfcheck.Words(t, pdf)
		dpi := 144
		w, hgt, pix := pdfcheck.PPM(t, pdf, 1, dpi)
		img := raster{w: w, h: hgt, pix: pix, scale: float64(dpi) / 72}
		// inked returns, between the words Above<n> and Below<n>,
		// the inked pixel rows of columns x0 to x1 (in points) and
		// the extent of the ink, in points.
		inked := func(n string, x0, x1 float64) (rows []bool, left, right float64) {
			above, below := wordIs(t, words, "Above"+n), wordIs(t, words, "Below"+n)
			left, right = float64(img.w), -1
			for y := int((above.YMax + 1) * img.scale); y < int((below.YMin-1)*img.scale); y++ {
				row := false
				for x := int(x0 * img.scale); x < min(img.w, int(x1*img.scale)); x++ {
					if dark(img.at(x, y)) {
						row = true
						left, right = min(left, float64(x)/img.scale), max(right, float64(x)/img.scale)
					}
				}
				rows = append(rows, row)
			}
			return rows, left, right
		}
		margin := wordIs(t, words, "Above1").XMin
		right := float64(img.w)/img.scale - margin // the themes' margins are even
		em := wordIs(t, words, "Above1").YMax - wordIs(t, words, "Above1").YMin
		// The tags: ink in the last 30 pt of the column, in two
		// bands, the first level with the fraction's row, ending at
		// the margin.
		tags, _, tagRight := inked("1", right-30, right+2)
		bands := 0
		for i, r := range tags {
			if r && (i == 0 || !tags[i-1]) {
				bands++
			}
		}
		if bands != 2 || tagRight < right-4 || tagRight > right+1 {
			t.Errorf("tags' ink in %d bands ending at %.1f, want (1) and (2) ending at the margin %.1f", bands, tagRight, right)
		}
		body, bodyLeft, bodyRight := inked("1", margin, right-30)
		if mid := (bodyLeft + bodyRight) / 2; mid < (margin+right)/2-8 || mid > (margin+right)/2+8 {
			t.Errorf("the align centred at %.1f, the column at %.1f", mid, (margin+right)/2)
		}
		// (2) is level with the last row: its band ends where the
		// rows' ink does, give or take a descender.
		lastTag, lastRow := -1, -1
		for i := range tags {
			if tags[i] {
				lastTag = i
			}
			if body[i] {
				lastRow = i
			}
		}
		if d := float64(lastRow-lastTag) / img.scale; d < -2 || d > 0.5*em {
			t.Errorf("(2)'s ink ends %.1f pt above the last row's", d)
		}
		_, l, r := inked("2", 0, float64(img.w)/img.scale)
		if d := l - margin; d < 0.5*em || d > 1.8*em {
			t.Errorf("multline's first row %.1f pt from the left margin, want about an em (%.1f)", d, em)
		}
		if d := right - r; d < 0.5*em || d > 1.8*em {
			t.Errorf("multline's last row ends %.1f pt from the right margin, want about an em (%.1f)", d, em)
		}
	})
}

// TestMathRefParity: \eqref and \ref print the tag their \label names,
// before the labelled formula and after it, and an unknown key prints
// (???), on both backends, from the parse stage's MathML. Each such
// formula printed as its TeX source.
func TestMathRefParity(t *testing.T) {
	pdfcheck.Require(t)
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf not installed")
	}
	md := "Before $\\eqref{euler}$ and $\\ref{euler}$, unknown $\\eqref{none}$.\n\n" +
		"$$\ne^{i\\pi} + 1 = 0 \\label{euler} \\tag{2}\n$$\n\nAfter $\\eqref{euler}$.\n"
	mathOnBackends(t, md, nil, func(t *testing.T, backend string, pdf []byte) {
		text := strings.Join(strings.Fields(drawnText(t, pdf)), " ")
		for _, want := range []string{"Before (2) and 2, unknown (???).", "After (2)."} {
			if !strings.Contains(text, want) {
				t.Errorf("text lacks %q:\n%s", want, text)
			}
		}
		if n := strings.Count(text, "(2)"); n != 3 {
			t.Errorf("(2) printed %d times, want the two references and the tag:\n%s", n, text)
		}
		if strings.Contains(text, "ref") || strings.Contains(text, "label") {
			t.Errorf("TeX printed:\n%s", text)
		}
	})
}

// drawnText returns the text of the glyphs pdf draws: render-fpdf marks
// each formula's glyphs with its TeX as ActualText, which pdftotext
// extracts in their place. Renamed in qpdf's uncompressed form (the same
// length, so the offsets hold), the mark is one pdftotext does not read.
func drawnText(t *testing.T, pdf []byte) string {
	t.Helper()
	dir := t.TempDir()
	in, qdf := filepath.Join(dir, "in.pdf"), filepath.Join(dir, "qdf.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("qpdf", "--qdf", "--object-streams=disable", in, qdf).CombinedOutput(); err != nil {
		t.Fatalf("qpdf: %v\n%s", err, out)
	}
	b, err := os.ReadFile(qdf)
	if err != nil {
		t.Fatal(err)
	}
	return pdfcheck.Text(t, bytes.ReplaceAll(b, []byte("/ActualText"), []byte("/ActualTexZ")))
}

// mathOnBackends converts md on render-fpdf and, where Chromium runs, on
// render-chrome, in the basic theme without page numbers (and fields, if
// any), fails a formula printed as its source (in the monospace face), and
// hands each PDF to check.
func mathOnBackends(t *testing.T, md string, fields map[string]string, check func(t *testing.T, backend string, pdf []byte)) {
	t.Helper()
	backends := []string{"fpdf"}
	if chromiumAvailable() {
		backends = append(backends, "chrome")
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			req := map[string]string{"markdown": md, "pageNumeration": "none", "theme": "basic"}
			maps.Copy(req, fields)
			resp, pdf := h.post(key, req)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
			}
			if strings.Contains(fontsOf(t, pdf), "Mono") {
				t.Error("a formula was printed as source")
			}
			check(t, backend, pdf)
		})
	}
}
