package e2e

import (
	"fmt"
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
