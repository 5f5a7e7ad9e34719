package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

const mathSample = "# Math\n\nPythagoras $a^2+b^2=c^2$ and prices $5 and $10 stay text.\n\n" +
	"$$\\frac{12}{34}$$\n\n$$\n\\sum_{i=1}^n i^2\n$$\n\n```math\n\\sqrt{56}\n```\n"

// TestMathOnEveryBackend renders GitHub's math through the whole service:
// Chromium lays out the MathML (the summation sign, no TeX left, a
// fraction bar between numerator and denominator, a radical's bar over
// its radicand); render-fpdf prints the TeX source in its monospace face.
// Dollars that are prices stay text on both.
func TestMathOnEveryBackend(t *testing.T) {
	pdfcheck.Require(t)
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			resp, pdf := h.post(key, map[string]string{"markdown": mathSample, "pageNumeration": "none"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
			}
			text := pdfcheck.Text(t, pdf)
			if !strings.Contains(strings.Join(strings.Fields(text), " "), "prices $5 and $10 stay text.") {
				t.Errorf("prices became math:\n%s", text)
			}
			if backend == "fpdf" {
				for _, src := range []string{`\frac{12}{34}`, `\sum_{i=1}^n i^2`, `\sqrt{56}`, `a^2+b^2=c^2`} {
					if !strings.Contains(text, src) {
						t.Errorf("the source %q is not printed:\n%s", src, text)
					}
				}
				path := filepath.Join(t.TempDir(), "math.pdf")
				if err := os.WriteFile(path, pdf, 0o600); err != nil {
					t.Fatal(err)
				}
				out, err := exec.Command("pdffonts", path).CombinedOutput()
				if err != nil || !strings.Contains(string(out), "Mono") {
					t.Errorf("no monospace face in the PDF (%v):\n%s", err, out)
				}
				return
			}
			for _, tex := range []string{`\frac`, `\sum`, `\sqrt`, "$$", "^2"} {
				if strings.Contains(text, tex) {
					t.Errorf("TeX %q is printed:\n%s", tex, text)
				}
			}
			for _, glyph := range []string{"∑", "12", "34", "56", "="} {
				if !strings.Contains(text, glyph) {
					t.Errorf("no %q in the formulas:\n%s", glyph, text)
				}
			}
			words := pdfcheck.Words(t, pdf)
			find := func(s string) pdfcheck.Word {
				t.Helper()
				for _, w := range words {
					// pdftotext joins the radical sign to its radicand.
					if strings.TrimPrefix(w.Text, "√") == s {
						return w
					}
				}
				t.Fatalf("no %q on the page:\n%s", s, text)
				return pdfcheck.Word{}
			}
			dpi := 144
			w, hgt, pix := pdfcheck.PPM(t, pdf, 1, dpi)
			img := raster{w: w, h: hgt, pix: pix, scale: float64(dpi) / 72}
			num, den := find("12"), find("34")
			numMid, denMid := (num.YMin+num.YMax)/2, (den.YMin+den.YMax)/2
			if numMid >= den.YMin {
				t.Fatalf("the numerator (y %.1f-%.1f) is not above the denominator (y %.1f)", num.YMin, num.YMax, den.YMin)
			}
			// The fraction bar: a dark row between them at least nearly as
			// wide as the numerator; no row of its digits is one run.
			if run := img.darkRow(num.XMin-2, numMid, num.XMax+2, denMid); run < 0.9*(num.XMax-num.XMin) {
				t.Errorf("no fraction bar between 12 and 34: longest dark row %.1f pt", run)
			}
			// The radical: its bar over the radicand ("√56" or "56"; in the
			// body's font Chromium drew neither sign nor bar).
			rad := find("56")
			if run := img.darkRow(rad.XMin-1, rad.YMin-4, rad.XMax+1, (rad.YMin+rad.YMax)/2); run < 0.6*(rad.XMax-rad.XMin) {
				t.Errorf("no radical over 56: longest dark row %.1f pt", run)
			}
		})
	}
}

// darkRow is the longest horizontal run of dark pixels, in points, in the
// box from (x0, y0) to (x1, y1), in points.
func (r raster) darkRow(x0, y0, x1, y1 float64) float64 {
	best := 0
	for y := int(y0 * r.scale); y <= int(y1*r.scale); y++ {
		run := 0
		for x := int(x0 * r.scale); x <= int(x1*r.scale); x++ {
			if dark(r.at(x, y)) {
				run++
				best = max(best, run)
			} else {
				run = 0
			}
		}
	}
	return float64(best) / r.scale
}

// TestMathLongInline renders a paragraph holding an inline formula far
// wider than the page on Chromium, which breaks no line inside a <math>:
// the formula wraps after its operators, every term on the page and
// inside the margins, and the text around it keeps its size (one formula
// too wide once made Chromium shrink every page of the document to fit;
// one that cannot wrap is cut at the margin instead).
func TestMathLongInline(t *testing.T) {
	pdfcheck.Require(t)
	var terms []string
	for i := range 40 {
		terms = append(terms, fmt.Sprintf("w_{%d} x_{%d}", i, i))
	}
	prose := strings.Repeat("Lorem ipsum dolor sit amet. ", 10)
	md := "# Model\n\n" + prose + "\n\nThe model is $" + strings.Join(terms, " + ") + "$ as fitted.\n"
	for _, backend := range backends(t) {
		if backend != "chrome" {
			continue // render-fpdf prints the TeX, which wraps as text
		}
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			render := func(md string) []byte {
				t.Helper()
				resp, pdf := h.post(key, map[string]string{"markdown": md, "pageNumeration": "none"})
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
				}
				return pdf
			}
			height := func(pdf []byte) float64 {
				for _, w := range pdfcheck.Words(t, pdf) {
					if w.Text == "Lorem" {
						return w.YMax - w.YMin
					}
				}
				t.Fatal("no Lorem on the page")
				return 0
			}
			pdf := render(md)
			want := height(render("# Model\n\n" + prose + "\n"))
			if got := height(pdf); got < want-0.5 {
				t.Errorf("the prose is %.1f pt high beside the formula, %.1f pt without it: the pages shrank", got, want)
			}
			// Inside \left( ... \right) TeX breaks no line either: the
			// formula is cut at the margin, the pages keep their size.
			fenced := strings.Replace(strings.Replace(md, "is $", "is $\\left(", 1), "$ as", "\\right)$ as", 1)
			if got := height(render(fenced)); got < want-0.5 {
				t.Errorf("the prose is %.1f pt high beside the fenced formula, %.1f pt without it: the pages shrank", got, want)
			}
			for _, w := range pdfcheck.Words(t, pdf) {
				if w.XMin < 36 || w.XMax > w.PageW-36 {
					t.Errorf("%q at x %.1f-%.1f is outside the page's margins (width %.1f)", w.Text, w.XMin, w.XMax, w.PageW)
				}
			}
			text := pdfcheck.Text(t, pdf)
			for i := range 40 {
				if !strings.Contains(text, fmt.Sprintf("𝑤%d 𝑥%d", i, i)) {
					t.Errorf("the term w_%d x_%d is not on the page:\n%s", i, i, text)
					break
				}
			}
		})
	}
}
