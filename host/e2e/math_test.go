package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

const mathSample = "# Math\n\nPythagoras $a^2+b^2=c^2$ and prices $5 and $10 stay text.\n\n" +
	"$$\\frac{12}{34}$$\n\n$$\n\\sum_{i=1}^n i^2\n$$\n\n```math\n\\sqrt{56}\n```\n"

// TestMathOnEveryBackend renders GitHub's math through the whole service.
// Chromium lays out the MathML (the summation sign, no TeX left, a
// fraction bar between numerator and denominator, a radical's bar over
// its radicand). render-fpdf lays it out too, with the same bars, and no
// formula in its monospace face, which it printed them in as TeX before;
// what a reader extracts from its formulas is their TeX, one word each
// spanning the formula. Dollars that are prices stay text on both.
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
			dpi := 144
			w, hgt, pix := pdfcheck.PPM(t, pdf, 1, dpi)
			img := raster{w: w, h: hgt, pix: pix, scale: float64(dpi) / 72}
			if backend == "fpdf" {
				for _, src := range []string{`\frac{12}{34}`, `\sum_{i=1}^n i^2`, `\sqrt{56}`, `a^2+b^2=c^2`} {
					if !strings.Contains(text, src) {
						t.Errorf("the source %q is not extracted:\n%s", src, text)
					}
				}
				if fonts := fontsOf(t, pdf); strings.Contains(fonts, "Mono") {
					t.Errorf("a formula is printed as source in the monospace face: %s", fonts)
				}
				words := pdfcheck.Words(t, pdf)
				find := func(s string) pdfcheck.Word { t.Helper(); return wordIs(t, words, s) }
				// The TeX's word spans the formula on its baseline: the
				// fraction's bar is above it, about as wide; the radical's
				// bar over the radicand, right of the sign.
				frac := find(`\frac{12}{34}`)
				fw := frac.XMax - frac.XMin
				if run := img.darkRow(frac.XMin-1, frac.YMin-12, frac.XMax+1, frac.YMax); run < 0.8*fw {
					t.Errorf("no fraction bar in %v: longest dark row %.1f pt", frac, run)
				}
				rad := find(`\sqrt{56}`)
				rw := rad.XMax - rad.XMin
				if run := img.darkRow(rad.XMin+0.3*rw, rad.YMin-12, rad.XMax+1, rad.YMax-4); run < 0.5*rw {
					t.Errorf("no radical bar in %v: longest dark row %.1f pt", rad, run)
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

// TestMathConverterLog: the math converter's notes on a formula reach the
// host's log as the parse plugin's structured lines, one bounded line a
// note. It wrote them to the process's stderr with a logger of its own:
// the host logged each line as a line of the plugin, a note split over
// several ("TreeBlood: 2026/11/24 15:52:57 ", "ce{)(}", " HERE^", ""). A
// formula it fails on (it recovers from its own panic and prints that to
// stdout, which go-plugin drops) is logged once, without the document's
// text.
func TestMathConverterLog(t *testing.T) {
	h := startHost(t, fpdf(), withArgs("--log-level", "debug"))
	_, key := h.account("pro", -1)
	// In headings, which give the title: converted on every backend.
	md := "# A $\\ce{)(}$ and $\\mathbb$\n\n## B $\\frac x\\hat$\n\nText.\n"
	resp, body := h.post(key, map[string]string{"markdown": md})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %.300s", resp.StatusCode, body)
	}
	var notes, failed int
	for line := range strings.Lines(h.logs.String()) {
		if !strings.Contains(line, "plugin=parse-goldmark") {
			continue
		}
		switch {
		case strings.Contains(line, "TreeBlood") || strings.Contains(line, "HERE^") || strings.Contains(line, `msg=""`) || strings.Contains(line, "msg=ce{"):
			t.Errorf("the converter's own line in the host log: %s", line)
		case strings.Contains(line, `msg="math converter note"`):
			notes++
			if len(line) > 400 {
				t.Errorf("note line of %d bytes: %s", len(line), line)
			}
		case strings.Contains(line, `msg="math converter failed on a formula, printed as its source"`):
			failed++
			// Under the request's id, as the plugins' other lines about
			// a request are.
			if !strings.Contains(line, "level=INFO") || strings.Contains(line, `\hat`) ||
				!strings.Contains(line, "requestId="+resp.Header.Get("X-Request-Id")) {
				t.Errorf("failure line: %s", line)
			}
		}
	}
	if notes == 0 || failed != 1 {
		t.Errorf("%d note lines, %d failure lines; want some and 1\n%s", notes, failed, h.logs.String())
	}
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
			continue // render-fpdf breaks it itself (TestMathLongInlineBreaks)
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

// TestMathLongInlineBreaks: on render-fpdf an inline formula wider than
// the column (a sum of 60 terms) breaks over lines after its operators,
// at the text's size; it was scaled down onto one line, under 4 pt tall.
// A reader extracts its TeX once.
func TestMathLongInlineBreaks(t *testing.T) {
	pdfcheck.Require(t)
	terms := make([]string, 60)
	for i := range terms {
		terms[i] = "a_{" + strconv.Itoa(i+1) + "}"
	}
	tex := strings.Join(terms, " + ")
	h := startHost(t, withArgs("--backend", "fpdf"))
	defer h.stop()
	_, key := h.account("pro", -1)
	resp, pdf := h.post(key, map[string]string{"markdown": "Before $" + tex + "$ after.\n", "pageNumeration": "none"})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
	}
	var before, first, after pdfcheck.Word
	for _, w := range pdfcheck.Words(t, pdf) {
		switch {
		case w.Text == "Before":
			before = w
		case strings.HasPrefix(w.Text, "a_{1}"):
			first = w
		case w.Text == "after.":
			after = w
		}
	}
	// The extracted TeX is anchored to the formula's first piece, at its
	// scale: on the line of "Before", as tall as the text.
	line := before.YMax - before.YMin
	if h := first.YMax - first.YMin; h < 0.8*line || first.YMin > before.YMax {
		t.Errorf("the formula starts %.1f pt tall at y %.1f, after \"Before\" %.1f pt tall at %.1f: scaled down onto a line of its own",
			h, first.YMin, line, before.YMin)
	}
	if lines := (after.YMin - before.YMin) / line; lines < 2.5 {
		t.Errorf("\"after.\" %.1f lines below \"Before\": the formula was not broken over lines", lines)
	}
	if n := strings.Count(pdfcheck.Text(t, pdf), "a_{60}"); n != 1 {
		t.Errorf("the TeX extracted %d times", n)
	}
}

// TestMathFunctionSpace: Chromium sets a function's name a thin space
// (3mu, a sixth of an em) from the letter after it and from a number
// before it, as TeX does and render-fpdf lays it out (its layout tests),
// and none from a parenthesis. Chromium ignores the lspace the converter
// puts on the name's <mi>: it printed "sinx", "logn", "argmaxf", "2sin",
// one word each.
func TestMathFunctionSpace(t *testing.T) {
	pdfcheck.Require(t)
	if !chromiumAvailable() {
		t.Skip("chromium not installed")
	}
	md := "Aa $\\sin x$ bb $\\log n$ cc $\\max_z h$ dd $\\operatorname{argmax} f$ ee $\\sin(x)$ ff $2\\cos y$ gg\n"
	pdf, _ := renderThemed(t, md, "chrome", "basic")
	words := pdfcheck.Words(t, pdf)
	for _, c := range [][2]string{{"sin", "𝑥"}, {"log", "𝑛"}, {"max", "ℎ"}, {"argmax", "𝑓"}, {"2", "cos"}} {
		i := 0
		for i < len(words)-1 && !(strings.HasPrefix(words[i].Text, c[0]) && strings.HasSuffix(words[i+1].Text, c[1])) {
			i++
		}
		if i == len(words)-1 {
			t.Errorf("no %q then %q in %.500v", c[0], c[1], words)
			continue
		}
		l, r := words[i], words[i+1]
		if l.Text != c[0] || r.Text != c[1] {
			t.Errorf("%q then %q, want %q then %q, spaced", l.Text, r.Text, c[0], c[1])
			continue
		}
		em := l.YMax - l.YMin
		if gap := (r.XMin - l.XMax) / em; gap < 0.12 || gap > 0.22 {
			t.Errorf("%s %s: %.3f em apart, want a sixth", c[0], c[1], gap)
		}
	}
	if !slices.ContainsFunc(words, func(w pdfcheck.Word) bool { return w.Text == "sin(𝑥)" }) {
		t.Errorf("no sin(𝑥) in one piece: %v", words)
	}
}

// TestMathCRLF: a document written on Windows, its lines ending in CRLF,
// extracts as the same text as with LF: each CR of a formula's lines went
// into the TeX render-fpdf gives the formula as its text, which a reader
// copies and a screen reader speaks.
func TestMathCRLF(t *testing.T) {
	pdfcheck.Require(t)
	h := startHost(t, withArgs("--backend", "fpdf"))
	defer h.stop()
	_, key := h.account("pro", -1)
	doc := mathSample + "\n$$\na+b\n= c\n$$\n\nInline $p +\nq$ and $`r\ns`$ end.\n"
	text := func(md string) string {
		t.Helper()
		resp, pdf := h.post(key, map[string]string{"markdown": md, "pageNumeration": "none"})
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
		}
		return pdfcheck.Text(t, pdf)
	}
	lf, crlf := text(doc), text(strings.ReplaceAll(doc, "\n", "\r\n"))
	if strings.Contains(crlf, "\r") || crlf != lf {
		t.Errorf("with CRLF the text is\n%q\nwith LF\n%q", crlf, lf)
	}
}
