package e2e

import (
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// alertKinds are GitHub's alerts: the marker, the title printed instead,
// a word unique to the body, and GitHub's colour (light theme).
var alertKinds = []struct {
	marker, title, body string
	r, g, b             byte
}{
	{"[!NOTE]", "Note", "notebody", 0x09, 0x69, 0xda},
	{"[!tip]", "Tip", "tipbody", 0x1a, 0x7f, 0x37},
	{"[!IMPORTANT]", "Important", "importantbody", 0x82, 0x50, 0xdf},
	{"[!Warning]", "Warning", "warningbody", 0x9a, 0x67, 0x00},
	{"[!CAUTION]", "Caution", "cautionbody", 0xd1, 0x24, 0x2f},
}

// alertsSample opens with more than render-fpdf's first part of text, so
// that the parse streams the alerts in parts of their own, and ends with a
// plain quote, one whose marker is not alone on its line, and a Hebrew
// alert.
func alertsSample() string {
	var b strings.Builder
	b.WriteString("# Alerts\n\n")
	for range 6 {
		b.WriteString("Filler prose that pushes the alerts past the first part of the parse, sentence after sentence.\n\n")
	}
	for _, k := range alertKinds {
		b.WriteString("> " + k.marker + "\n> The " + k.body + " sentence.\n\n")
	}
	b.WriteString("> plainquote words.\n\n> [!NOTE] notalone\n> stays a quote.\n\n")
	b.WriteString("> [!CAUTION]\n> זהירות: הטקסט הזה בעברית.\n")
	return b.String()
}

// TestAlertsOnEveryBackend renders GitHub's alerts through the whole
// service on each backend and theme: each prints its title, never its
// marker, and the title and the bar beside the body are in the alert's
// colour; a plain quote keeps its theme's bar, a marker not alone on its
// line stays text, and a right-to-left alert has its bar and title on the
// right.
func TestAlertsOnEveryBackend(t *testing.T) {
	pdfcheck.Require(t)
	src := alertsSample()
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			for _, theme := range []string{"basic", "modern"} {
				t.Run(theme, func(t *testing.T) {
					resp, pdf := h.post(key, map[string]string{"markdown": src, "theme": theme, "pageNumeration": "none"})
					if resp.StatusCode != 200 {
						t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
					}
					text := pdfcheck.Text(t, pdf)
					if strings.Contains(strings.ReplaceAll(text, "[!NOTE] notalone", ""), "[!") {
						t.Errorf("an alert's marker is printed:\n%s", text)
					}
					if !strings.Contains(strings.Join(strings.Fields(text), " "), "[!NOTE] notalone stays a quote.") {
						t.Errorf("a marker not alone on its line is not kept as text:\n%s", text)
					}
					words := pdfcheck.Words(t, pdf)
					find := func(s string, nth int) pdfcheck.Word {
						t.Helper()
						for _, w := range words {
							if w.Text == s {
								if nth == 0 {
									return w
								}
								nth--
							}
						}
						t.Fatalf("no %q on the page:\n%s", s, text)
						return pdfcheck.Word{}
					}
					dpi := 144
					w, hgt, pix := pdfcheck.PPM(t, pdf, 1, dpi)
					img := raster{w: w, h: hgt, pix: pix, scale: float64(dpi) / 72}
					for _, k := range alertKinds {
						title, body := find(k.title, 0), find(k.body, 0)
						if title.YMax > body.YMin {
							t.Errorf("%s: the title (y %.1f-%.1f) is not above the body (y %.1f)", k.title, title.YMin, title.YMax, body.YMin)
						}
						if n := img.near(title, 0, k.r, k.g, k.b); n == 0 {
							t.Errorf("%s: the title has no pixel of #%02x%02x%02x", k.title, k.r, k.g, k.b)
						}
						if n := img.near(body, -2, k.r, k.g, k.b); n == 0 {
							t.Errorf("%s: no bar of #%02x%02x%02x left of the body", k.title, k.r, k.g, k.b)
						}
					}
					plain := find("plainquote", 0)
					for _, k := range alertKinds {
						if n := img.near(plain, -2, k.r, k.g, k.b); n > 0 {
							t.Errorf("the plain quote's bar has %d pixels of %s's colour", n, k.title)
						}
					}
					if img.nonWhite(plain, -2) == 0 {
						t.Errorf("the plain quote has no bar")
					}
					// The Hebrew alert: its title and bar on the right.
					caution := alertKinds[4]
					title := find(caution.title, 1)
					if mid := title.PageW / 2; title.XMin < mid {
						t.Errorf("the right-to-left alert's title starts at x %.1f, left of the middle %.1f", title.XMin, mid)
					}
					// pdftotext spells right-to-left words backwards: the
					// Hebrew word furthest right starts the line.
					var hebrew pdfcheck.Word
					for _, w := range words {
						if strings.ContainsFunc(w.Text, func(r rune) bool { return r >= 0x5d0 && r <= 0x5ea }) && w.XMax > hebrew.XMax {
							hebrew = w
						}
					}
					if n := img.near(hebrew, 2, caution.r, caution.g, caution.b); n == 0 {
						t.Errorf("the right-to-left alert has no bar right of its text")
					}
				})
			}
		})
	}
}

// near counts the pixels within 48 of the colour (r, g, b) on each
// channel, in a word's box (side 0), or in the space of three line heights
// before it (side < 0) or after it (side > 0), on its line.
func (img raster) near(w pdfcheck.Word, side int, r, g, b byte) int {
	n := 0
	img.scan(w, side, func(cr, cg, cb byte) {
		if diff(cr, r) < 48 && diff(cg, g) < 48 && diff(cb, b) < 48 {
			n++
		}
	})
	return n
}

// nonWhite counts the pixels of a clear colour or grey in the space near
// (see near).
func (img raster) nonWhite(w pdfcheck.Word, side int) int {
	n := 0
	img.scan(w, side, func(cr, cg, cb byte) {
		if int(cr)+int(cg)+int(cb) < 3*235 {
			n++
		}
	})
	return n
}

func (img raster) scan(w pdfcheck.Word, side int, fn func(r, g, b byte)) {
	x0, y0, x1, y1 := img.box(w)
	span := 3 * (y1 - y0)
	switch {
	case side < 0:
		x0, x1 = x0-span, x0-1
	case side > 0:
		x0, x1 = x1+1, x1+span
	}
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			fn(img.at(x, y))
		}
	}
}

func diff(a, b byte) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}
