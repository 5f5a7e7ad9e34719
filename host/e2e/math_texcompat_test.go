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
