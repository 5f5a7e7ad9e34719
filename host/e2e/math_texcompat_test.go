package e2e

import (
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestMathTeXCompat: the TeX commands READMEs write as GitHub's MathJax
// reads them print on both backends. The converter wrote an <merror> for
// \operatorname, \bm, \xrightarrow, \stackrel, \boxed, \textbf and \tag,
// and read \pmb as μ: Chromium drew each command as a small red mark and
// lost it (argmax came out as the italic letters a r g m a x), and
// render-fpdf printed every such formula as its source. Now the first
// ones are laid out (argmax upright, as one word), \boxed draws its box
// on both, and a command neither reads (\tag) prints its formula as its
// source on both.
func TestMathTeXCompat(t *testing.T) {
	pdfcheck.Require(t)
	const laid = "Find $\\operatorname{argmax}_x f(x)$ and $\\operatorname*{arg\\,min}_y g$.\n\n" +
		"Bold $\\bm{v} + \\pmb{w}$, arrow $a \\xrightarrow{f} b$, def $x \\stackrel{\\text{def}}{=} y$, " +
		"text $\\textbf{bold}$, aligned\n\n$$\\begin{split} a &= b \\\\ &= c \\end{split}$$\n"
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			post := func(md string) []byte {
				t.Helper()
				resp, pdf := h.post(key, map[string]string{"markdown": md, "pageNumeration": "none"})
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
				}
				return pdf
			}

			pdf := post(laid)
			text := pdfcheck.Text(t, pdf)
			if backend == "fpdf" {
				// render-fpdf's formulas are copied as their TeX: what
				// tells laid out from printed as source is the face.
				if fonts := fontsOf(t, pdf); strings.Contains(fonts, "Mono") {
					t.Errorf("a formula is printed as source: %s\n%s", fonts, text)
				}
				// An operator's name is upright: no italic face in a
				// document of only \operatorname.
				if fonts := fontsOf(t, post("$\\operatorname{argmax}$\n")); strings.Contains(fonts, "Italic") ||
					strings.Contains(fonts, "Mono") {
					t.Errorf("\\operatorname{argmax} is not upright: %s", fonts)
				}
			} else {
				// Chromium writes an italic letter as its mathematical
				// italic character: plain ASCII is upright.
				for _, want := range []string{"argmax", "min", "𝐯", "𝐰", "⟶", "def", "𝐛𝐨𝐥𝐝"} {
					if !strings.Contains(text, want) {
						t.Errorf("no %q in the formulas:\n%s", want, text)
					}
				}
				for _, not := range []string{"operatorname", "xrightarrow", "μ", "\\", "&"} {
					if strings.Contains(text, not) {
						t.Errorf("%q in the formulas:\n%s", not, text)
					}
				}
			}

			pdf = post("Tagged $a = b \\tag{1}$ here.\n")
			if text := pdfcheck.Text(t, pdf); !strings.Contains(text, `a = b \tag{1}`) {
				t.Errorf("the formula with \\tag is not printed as its source:\n%s", text)
			}
			if backend == "fpdf" && !strings.Contains(fontsOf(t, pdf), "Mono") {
				t.Error("the formula with \\tag is not in the monospace face")
			}

			// \textcolor: red on Chromium; render-fpdf, which draws no
			// colour in formulas, drew it black, where \color printed as
			// source: now both print as source.
			pdf = post("Red $\\textcolor{red}{x}$ here.\n")
			if backend == "fpdf" {
				if text := pdfcheck.Text(t, pdf); !strings.Contains(fontsOf(t, pdf), "Mono") || !strings.Contains(text, `\textcolor{red}{x}`) {
					t.Errorf("\\textcolor is not printed as source: %s\n%s", fontsOf(t, pdf), text)
				}
			} else {
				w, hgt, pix := pdfcheck.PPM(t, pdf, 1, 144)
				img := raster{w: w, h: hgt, pix: pix, scale: 2}
				if n := img.red(wordIs(t, pdfcheck.Words(t, pdf), "𝑥")); n == 0 {
					t.Error("\\textcolor{red}{x} is not red")
				}
			}

			// The box: a dark row above the E, wider than it. render-fpdf's
			// formula is one word, its TeX, spanning what it draws.
			pdf = post("Boxed $\\boxed{E}$ here.\n")
			text = pdfcheck.Text(t, pdf)
			word := "𝐸"
			if backend == "fpdf" {
				word = `\boxed{E}`
				if strings.Contains(fontsOf(t, pdf), "Mono") {
					t.Errorf("\\boxed{E} is printed as source")
				}
			} else if strings.Contains(text, "boxed") {
				t.Errorf("\\boxed printed:\n%s", text)
			}
			dpi := 144
			w, hgt, pix := pdfcheck.PPM(t, pdf, 1, dpi)
			img := raster{w: w, h: hgt, pix: pix, scale: float64(dpi) / 72}
			e := wordIs(t, pdfcheck.Words(t, pdf), word)
			if run := img.darkRow(e.XMin-6, e.YMin-6, e.XMax+6, e.YMin+1); run < 0.9*(e.XMax-e.XMin) {
				t.Errorf("no box over E (%v): longest dark row %.1f pt", e, run)
			}
		})
	}
}

// TestMathGather: gather's rows are centred one under another, in
// display style, on both backends, and aligned's left column stands
// flush right on Chromium. gather printed as its source on both (the
// converter ran its rows together with the \\ printed), and Chromium set
// every table cell flush left, whatever its alignment: aligned's "a"
// stood left of its column, away from its "=".
func TestMathGather(t *testing.T) {
	pdfcheck.Require(t)
	md := "Above\n\n$$\n\\begin{gather}\nm=\\frac{1}{2} \\\\\nb+c+e+f+g+h=d\n\\end{gather}\n$$\n\nMiddle\n\n" +
		"$$\n\\begin{aligned}\nq&=r \\\\\nb+c+e+f+g+h&=d\n\\end{aligned}\n$$\n\nBelow\n"
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			pdf, _ := renderThemed(t, md, backend, "basic")
			if backend == "fpdf" {
				// Copied as its TeX: what tells laid out from printed as
				// source is the face.
				if fonts := fontsOf(t, pdf); strings.Contains(fonts, "Mono") {
					t.Errorf("a formula is printed as source: %s", fonts)
				}
				return
			}
			words := pdfcheck.Words(t, pdf)
			// pdftotext joins a row's characters into words: "𝑚=" then
			// the fraction's "1" over "2"; "𝑏+𝑐+𝑒+𝑓+𝑔+ℎ=𝑑", "𝑞=𝑟".
			at := func(text string, n int) pdfcheck.Word {
				t.Helper()
				for _, w := range words {
					if w.Text == text {
						if n--; n < 0 {
							return w
						}
					}
				}
				t.Fatalf("no %q in %v", text, words)
				return pdfcheck.Word{}
			}
			var q, long pdfcheck.Word
			for _, w := range words {
				if strings.HasPrefix(w.Text, "𝑞") && q.Text == "" {
					q = w
				}
				if w.Text == "𝑏+𝑐+𝑒+𝑓+𝑔+ℎ=𝑑" {
					long = w // aligned's, the last
				}
			}
			if d := q.XMax - long.XMax; d < -3 || d > 3 || q.XMin < long.XMin+50 {
				t.Errorf("aligned's q is not flush right against its =: %v over %v", q, long)
			}
			text := pdfcheck.Text(t, pdf)
			if strings.Contains(text, "gather") || strings.Contains(text, `\`) {
				t.Fatalf("printed as source:\n%s", text)
			}
			m, one, long := at("𝑚=", 0), at("1", 0), at("𝑏+𝑐+𝑒+𝑓+𝑔+ℎ=𝑑", 0)
			if d := (m.XMin+one.XMax)/2 - (long.XMin+long.XMax)/2; d < -2 || d > 2 {
				t.Errorf("gather's rows are not centred: %.1f pt apart (%v %v, %v)", d, m, one, long)
			}
			// The fraction in display style: its numerator as tall as the
			// row's letters, not a script's.
			if h := one.YMax - one.YMin; h < 0.9*(long.YMax-long.YMin) {
				t.Errorf("gather's fraction is in text style: numerator %.1f pt tall, the row %.1f", h, long.YMax-long.YMin)
			}
		})
	}
}

// TestMathTextEndTags: a MathML end tag in \text, which the converter
// copies through unescaped, in a formula with a \tag panicked the parse,
// and the document was a 500 on both backends; without the \tag Chromium
// printed the formula's TeX annotation as text beside it, and drew
// nothing of a formula of MathML elements in \text. Such a formula
// prints as its source, once, and the document prints.
func TestMathTextEndTags(t *testing.T) {
	pdfcheck.Require(t)
	const md = "Before.\n\n$$\\text{</mrow></mrow></math>} \\tag{1}$$\n\nAnd $\\text{</math>} y$ after, " +
		"$\\text{<mroot></mroot>}$ too.\n"
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			resp, pdf := h.post(key, map[string]string{"markdown": md, "pageNumeration": "none"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
			}
			text := strings.Join(strings.Fields(pdfcheck.Text(t, pdf)), " ")
			const want = `Before. \text{</mrow></mrow></math>} \tag{1} And \text{</math>} y after, \text{<mroot></mroot>} too.`
			if !strings.Contains(text, want) {
				t.Errorf("no %q in:\n%s", want, text)
			}
		})
	}
}
