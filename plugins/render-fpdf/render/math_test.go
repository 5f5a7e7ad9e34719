package render

import (
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Formulas as parse-goldmark puts them in the tree: TeX as Text, compact
// MathML in the attribute mathml (the MathML below is the parser's, for
// these sources).
const (
	mmlFrac   = `<math display="block"><mrow><mfrac><mn>12</mn><mn>34</mn></mfrac></mrow></math>`
	mmlSqrt   = `<math display="block"><mrow><msqrt><mn>56</mn></msqrt></mrow></math>`
	mmlPythag = `<math display="inline"><mrow><msup><mi>a</mi><mn>2</mn></msup><mo>+</mo><msup><mi>b</mi><mn>2</mn></msup><mo>=</mo><msup><mi>c</mi><mn>2</mn></msup></mrow></math>`
	mmlSum    = `<math display="block"><mrow><mrow><munderover><mo largeop="true" movablelimits="true">∑</mo><mrow><mi>i</mi><mo>=</mo><mn>1</mn></mrow><mi>n</mi></munderover></mrow><msup><mi>i</mi><mn>2</mn></msup></mrow></math>`
)

// displayMath is a display math block as the parser writes it; mml ""
// is one it did not convert.
func displayMath(tex, mml string) *stage.Node {
	n := &stage.Node{Kind: stage.KindCodeBlock, Text: tex, Attrs: map[string]string{"lang": "math", "math": "display"}}
	if mml != "" {
		n.Attrs["mathml"] = mml
	}
	return n
}

// inlineMath is inline math as the parser writes it.
func inlineMath(tex, mml string) *stage.Node {
	n := &stage.Node{Kind: stage.KindCodeSpan, Text: tex, Attrs: map[string]string{"math": "inline"}}
	if mml != "" {
		n.Attrs["mathml"] = mml
	}
	return n
}

// usesMono reports whether the PDF embeds the monospace face, which math
// printed as source is drawn in.
func usesMono(t *testing.T, pdf []byte) bool {
	for _, f := range pdfFonts(t, pdf) {
		if strings.Contains(f[0], "Mono") {
			return true
		}
	}
	return false
}

// gray is a page rendered in grey levels, scale pixels a point.
type gray struct {
	w, h  int
	px    []byte
	scale float64
}

func grayPage(t *testing.T, pdf []byte, dpi int) gray {
	w, h, px := rasterGray(t, pdf, dpi)
	return gray{w, h, px, float64(dpi) / 72}
}

// darkRow is the longest horizontal run of dark pixels, in points, in the
// box from (x0, y0) to (x1, y1), in points.
func (g gray) darkRow(x0, y0, x1, y1 float64) float64 {
	best := 0
	for y := max(0, int(y0*g.scale)); y <= int(y1*g.scale) && y < g.h; y++ {
		run := 0
		for x := max(0, int(x0*g.scale)); x <= int(x1*g.scale) && x < g.w; x++ {
			if g.px[y*g.w+x] < 128 {
				run++
				best = max(best, run)
			} else {
				run = 0
			}
		}
	}
	return float64(best) / g.scale
}

// inkOutside counts dark pixels outside the box from (x0, y0) to (x1, y1).
func (g gray) inkOutside(x0, y0, x1, y1 float64) int {
	n := 0
	for y := range g.h {
		for x := range g.w {
			px, py := float64(x)/g.scale, float64(y)/g.scale
			if g.px[y*g.w+x] < 160 && (px < x0 || px > x1 || py < y0 || py > y1) {
				n++
			}
		}
	}
	return n
}

// findWord returns the first word of the page that is s.
func findWord(t *testing.T, p bboxPage, s string) bboxWord {
	t.Helper()
	for _, w := range p.Words {
		if w.Text == s {
			return w
		}
	}
	t.Fatalf("no word %q on the page: %v", s, p.Words)
	return bboxWord{}
}

// TestMathLaidOut: formulas with MathML are laid out, not printed as
// source: no monospace face is used; a fraction has its bar, a radical
// its bar over the radicand; what pdftotext extracts is the TeX, one word
// a formula spanning it on its baseline. render-fpdf printed the TeX in
// its monospace face.
func TestMathLaidOut(t *testing.T) {
	needTool(t, "pdftoppm")
	r := newRenderer(t, "")
	d := doc(
		para(txt("Pythagoras "), inlineMath(`a^2+b^2=c^2`, mmlPythag), txt(" holds.")),
		displayMath(`\frac{12}{34}`, mmlFrac),
		displayMath(`\sqrt{56}`, mmlSqrt),
		displayMath(`\sum_{i=1}^n i^2`, mmlSum),
	)
	resp := renderPDF(t, r, req{doc: d, tokens: basicTokens, numbering: stage.NumberingNone})
	if usesMono(t, resp.PDF) {
		t.Error("a formula was printed in the monospace face")
	}
	text := pdfText(t, resp.PDF)
	for _, want := range []string{`Pythagoras a^2+b^2=c^2 holds.`, `\frac{12}{34}`, `\sqrt{56}`, `\sum_{i=1}^n i^2`} {
		if !strings.Contains(text, want) {
			t.Errorf("extracted text lacks %q:\n%s", want, text)
		}
	}
	page := pdfBoxes(t, resp.PDF)[0]
	g := grayPage(t, resp.PDF, 144)
	// The ActualText word spans the formula's width on its baseline; the
	// bar of 12/34 is a dark row about as wide, on the math axis above.
	frac := findWord(t, page, `\frac{12}{34}`)
	fw := frac.X1 - frac.X0
	if fw < 8 || fw > 40 {
		t.Errorf("the fraction is %.1f pt wide, want about two digits", fw)
	}
	if run := g.darkRow(frac.X0-1, frac.Y0-12, frac.X1+1, frac.Y1); run < 0.8*fw {
		t.Errorf("no fraction bar over %v: longest dark row %.1f pt", frac, run)
	}
	// The digits are stacked: above the bar and below the baseline's line
	// box there is ink.
	if run := g.darkRow(frac.X0, frac.Y1+1, frac.X1, frac.Y1+10); run == 0 {
		t.Error("no denominator below the fraction's baseline")
	}
	rad := findWord(t, page, `\sqrt{56}`)
	rw := rad.X1 - rad.X0
	if run := g.darkRow(rad.X0+0.3*rw, rad.Y0-12, rad.X1+1, rad.Y1-4); run < 0.5*rw {
		t.Errorf("no radical bar over 56 (%v): longest dark row %.1f pt", rad, run)
	}
	// Display formulas are centred in the column.
	for _, w := range []bboxWord{frac, rad} {
		mid := (w.X0 + w.X1) / 2
		if c := page.W / 2; mid < c-3 || mid > c+3 {
			t.Errorf("%q is centred at %.1f, the column at %.1f", w.Text, mid, c)
		}
	}
}

// TestMathAlphabets: script, fraktur and double-struck letters
// (\mathcal{O}, \mathscr, \mathfrak, \mathbb{E}, ℝ and ℒ) are laid out in
// the face made of DejaVu Math TeX Gyre's, as Chromium draws them, inline
// and in display. render-fpdf printed every formula holding one that
// Unicode puts above U+FFFF as its source, in the monospace face.
func TestMathAlphabets(t *testing.T) {
	needTool(t, "pdftoppm")
	// The parser's MathML for these sources; \mathcal and \mathscr end
	// their letter with a variation selector.
	const (
		texInline  = `\mathcal{O}(n)`
		mmlInline  = `<math display="inline"><mrow><mi>𝒪︀</mi><mo form="prefix" stretchy="false">(</mo><mi>n</mi><mo form="postfix" stretchy="false">)</mo></mrow></math>`
		texDisplay = `\mathfrak{g}=\mathscr{F}+\mathbb{E}\mathbb{R}\mathcal{L}\mathbb{1}`
		mmlDisplay = `<math display="block"><mrow><mi>𝔤</mi><mo>=</mo><mi>ℱ︁</mi><mo>+</mo><mi>𝔼</mi><mi>ℝ</mi><mi>ℒ︀</mi><mn>𝟙</mn></mrow></math>`
	)
	r := newRenderer(t, "")
	d := doc(para(txt("Cost "), inlineMath(texInline, mmlInline), txt(" here.")), displayMath(texDisplay, mmlDisplay))
	resp := renderPDF(t, r, req{doc: d, tokens: basicTokens, numbering: stage.NumberingNone})
	if usesMono(t, resp.PDF) {
		t.Error("a formula was printed as source, in the monospace face")
	}
	alpha := false
	for _, f := range pdfFonts(t, resp.PDF) {
		alpha = alpha || strings.HasSuffix(f[0], "+DejaVuMathTeXGyre-Alphabets")
	}
	if !alpha {
		t.Errorf("no DejaVu Math TeX Gyre letters embedded: %v", pdfFonts(t, resp.PDF))
	}
	page := pdfBoxes(t, resp.PDF)[0]
	g := grayPage(t, resp.PDF, 144)
	// Each formula's word spans its letters, and they are inked: the
	// script O is about as wide as a capital, eight letters and
	// operators are several times that.
	for _, c := range []struct {
		tex      string
		min, max float64
	}{{texInline, 20, 45}, {texDisplay, 70, 160}} {
		w := findWord(t, page, c.tex)
		if ww := w.X1 - w.X0; ww < c.min || ww > c.max {
			t.Errorf("%s is %.1f pt wide, want %.0f-%.0f", c.tex, ww, c.min, c.max)
		}
		if run := g.darkRow(w.X0, w.Y0, w.X0+0.3*(w.X1-w.X0), w.Y1); run == 0 {
			t.Errorf("%s: no ink at its start", c.tex)
		}
	}
}

// TestMathFallback: a formula outside the laid-out subset, or one the
// parser did not convert, is printed whole as its TeX source in the
// monospace face, as before; never partly laid out.
func TestMathFallback(t *testing.T) {
	needTool(t, "pdffonts")
	deep := `<math display="block">` + strings.Repeat("<mrow>", 40) + "<mi>x</mi>" + strings.Repeat("</mrow>", 40) + "</math>"
	cases := map[string]struct{ tex, mml string }{
		"enclose":          {`\sout{x}`, `<math display="block"><mrow><menclose notation="horizontalstrike"><mi>x</mi></menclose></mrow></math>`},
		"colour":           {`\color{red}{x}`, `<math display="block"><mrow><mstyle mathcolor="red"><mi>x</mi></mstyle></mrow></math>`},
		"textcolor":        {`\textcolor{red}{x+y}`, `<math display="block"><mrow><mrow mathcolor="red"><mi>x</mi><mo>+</mo><mi>y</mi></mrow></mrow></math>`},
		"textcolor token":  {`\textcolor{red}{x}`, `<math display="block"><mrow><mi mathcolor="red">x</mi></mrow></math>`},
		"no glyph":         {`\hieroglyph`, `<math display="block"><mrow><mi>𓀀</mi></mrow></math>`},
		"variant":          {`\mathscr{A}`, `<math display="block"><mi mathvariant="script">A</mi></math>`},
		"not converted":    {`\frac{a`, ""},
		"malformed":        {`x`, `<math><mi>x</mi>`},
		"too deep":         {`x`, deep},
		"wrong arity":      {`x`, `<math><mfrac><mi>x</mi></mfrac></math>`},
		"element in token": {`x`, `<math><mi><mi>x</mi></mi></math>`},
	}
	r := newRenderer(t, "")
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, n := range []*stage.Node{displayMath(tc.tex, tc.mml), para(txt("In "), inlineMath(tc.tex, tc.mml))} {
				resp := renderPDF(t, r, req{doc: doc(n), tokens: basicTokens, numbering: stage.NumberingNone})
				if !usesMono(t, resp.PDF) {
					t.Errorf("%s: not printed as source in the monospace face", n.Kind)
				}
				if text := pdfText(t, resp.PDF); !strings.Contains(text, tc.tex) {
					t.Errorf("%s: the source %q is not printed:\n%s", n.Kind, tc.tex, text)
				}
			}
		})
	}
}

// TestMathInsideMargins: formulas wider than the column, inline, display
// and in a table cell, are scaled down to it: neither their extracted
// words nor any of their ink leave the margins.
func TestMathInsideMargins(t *testing.T) {
	needTool(t, "pdftoppm")
	var b strings.Builder
	b.WriteString(`<math display="block"><mrow>`)
	for i := range 150 {
		if i > 0 {
			b.WriteString("<mo>+</mo>")
		}
		b.WriteString(`<mfrac><mi>x</mi><mn>` + itoa(i) + `</mn></mfrac>`)
	}
	b.WriteString("</mrow></math>")
	wide := b.String()
	wideInline := strings.Replace(wide, `display="block"`, `display="inline"`, 1)
	cell := func(n *stage.Node) *stage.Node { return nd(stage.KindTableCell, n) }
	d := doc(
		displayMath(`\sum wide`, wide),
		para(txt("Inline "), inlineMath(`\sum wideinline`, wideInline), txt(" ends.")),
		nd(stage.KindTable,
			nd(stage.KindTableHead, cell(txt("a")), cell(txt("b"))),
			nd(stage.KindTableRow, cell(inlineMath(`\sum cell`, wideInline)), cell(txt("text")))),
	)
	resp := renderPDF(t, newRenderer(t, ""), req{doc: d, tokens: basicTokens, numbering: stage.NumberingNone})
	m := basicTokens.Margins
	pages := pdfBoxes(t, resp.PDF)
	checkInsideMargins(t, pages, m, 1)
	for _, s := range []string{`\sum wide`, `\sum wideinline`, `\sum cell`} {
		if !strings.Contains(pdfText(t, resp.PDF), s) {
			t.Errorf("%q is not extracted", s)
		}
	}
	g := grayPage(t, resp.PDF, 72)
	if n := g.inkOutside(m[3]-1, m[0]-1, pages[0].W-m[1]+1, pages[0].H-m[2]+1); n > 0 {
		t.Errorf("%d dark pixels outside the margins", n)
	}
}

// TestMathBounds: hostile formulas cost time linear in their size. \frac
// nested as deep as the parser's 8 KiB of TeX allow (over 1,000 levels)
// is printed as source; one 30 deep, and a row of thousands of
// elements, are laid out quickly.
func TestMathBounds(t *testing.T) {
	needTool(t, "pdffonts")
	nest := func(n int) string {
		return `<math display="block">` + strings.Repeat("<mfrac><mn>1</mn>", n) + "<mi>x</mi>" + strings.Repeat("</mfrac>", n) + "</math>"
	}
	long := `<math display="inline"><mrow>` + strings.Repeat("<mi>x</mi><mo>+</mo>", 4000) + "<mn>1</mn></mrow></math>"
	r := newRenderer(t, "")
	for _, tc := range []struct {
		name, mml string
		source    bool
	}{
		{"nested 1150", nest(1150), true},
		{"nested 30", nest(30), false},
		{"long row", long, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			resp := renderPDF(t, r, req{doc: doc(displayMath(`\frac{1}{x}`, tc.mml)), tokens: basicTokens, numbering: stage.NumberingNone})
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
			if got := usesMono(t, resp.PDF); got != tc.source {
				t.Errorf("printed as source: %v, want %v", got, tc.source)
			}
		})
	}
}

// BenchmarkMath measures what formulas add to a render: a page of 100
// formulas (the parser's MathML for the quadratic formula, a sum with
// limits and a² + b² = c², inline and display) against the same page with
// their TeX printed as source. Report the difference per formula:
//
//	go test -run '^$' -bench 'Math' -benchmem ./plugins/render-fpdf/render/
func BenchmarkMath(b *testing.B) {
	const quadratic = `<math display="block"><mrow><mi>x</mi><mo>=</mo><mfrac><mrow><mo>−</mo><mi>b</mi><mo>±</mo><msqrt><mrow><msup><mi>b</mi><mn>2</mn></msup><mo>−</mo><mn>4</mn><mi>a</mi><mi>c</mi></mrow></msqrt></mrow><mrow><mn>2</mn><mi>a</mi></mrow></mfrac></mrow></math>`
	build := func(mathml bool) stage.Document {
		var ns []*stage.Node
		mml := func(s string) string {
			if mathml {
				return s
			}
			return ""
		}
		for i := range 25 {
			ns = append(ns,
				para(txt("Text "+itoa(i)+" with "), inlineMath(`a^2+b^2=c^2`, mml(mmlPythag)), txt(" and "),
					inlineMath(`x = \frac{-b \pm \sqrt{b^2-4ac}}{2a}`, mml(strings.Replace(quadratic, "block", "inline", 1)))),
				displayMath(`\sum_{i=1}^n i^2`, mml(mmlSum)),
				displayMath(`x = \frac{-b \pm \sqrt{b^2-4ac}}{2a}`, mml(quadratic)))
		}
		return doc(ns...)
	}
	r := newRenderer(b, `{}`)
	for _, mathml := range []bool{false, true} {
		d := build(mathml)
		name := "formulas=100/source"
		if mathml {
			name = "formulas=100/laid-out"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				renderPDF(b, r, req{doc: d, tokens: basicTokens})
			}
		})
	}
}

// TestMathItemBound: formulas drawing more than MaxMathItems items in all
// are printed as source past the bound, so that a document of 300,000
// one-character tokens, 413 (over the drawing-item limit) once its
// formulas were laid out, renders as it did when they were source.
func TestMathItemBound(t *testing.T) {
	needTool(t, "pdffonts")
	body := `<math display="block"><mrow>` + strings.Repeat("<mi>x</mi><mo>+</mo>", 5000) + "<mn>1</mn></mrow></math>"
	var ns []*stage.Node
	for range 30 {
		ns = append(ns, displayMath(strings.Repeat("x+", 5000)+"1", body))
	}
	r := newRenderer(t, "")
	resp := renderPDF(t, r, req{doc: doc(ns...), tokens: basicTokens, numbering: stage.NumberingNone})
	if !usesMono(t, resp.PDF) {
		t.Error("no formula past the bound printed as source")
	}
	// A laid-out formula extracts as its TeX on one line; one printed as
	// source wraps.
	tex := strings.Repeat("x+", 5000) + "1"
	if n := strings.Count(pdfText(t, resp.PDF), tex); n < 5 || n > 10 {
		t.Errorf("%d formulas laid out, want the first 9 or so", n)
	}
}
