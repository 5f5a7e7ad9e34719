package e2e

import (
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// emojiSample has GitHub shortcodes and emoji characters between words the
// test finds, and shortcodes in code, which stay literal.
const emojiSample = "# Release :rocket:\n\n" +
	"okbefore :white_check_mark: okafter\n\n" +
	"redbefore 🚀 redafter\n\n" +
	"Kept `:tada:` in code.\n\n" +
	"```\n:rocket: in a block\n```\n"

// TestEmojiOnEveryBackend renders shortcodes and emoji through the whole
// service on each backend: shortcodes become emoji outside code and stay
// literal in it, each emoji is drawn in its colours (✅'s green, 🚀's red)
// between the words around it, and the text reads back in order.
func TestEmojiOnEveryBackend(t *testing.T) {
	pdfcheck.Require(t)
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			resp, pdf := h.post(key, map[string]string{"markdown": emojiSample, "pageNumeration": "none"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
			}
			text := strings.Join(strings.Fields(pdfcheck.Text(t, pdf)), " ")
			for _, want := range []string{"Kept :tada: in code.", ":rocket: in a block"} {
				if !strings.Contains(text, want) {
					t.Errorf("text lacks %q:\n%s", want, text)
				}
			}
			for _, no := range []string{":white_check_mark:", "Release :rocket:", "\uFFFD"} {
				if strings.Contains(text, no) {
					t.Errorf("text holds %q:\n%s", no, text)
				}
			}
			// pdftotext places Chromium's emoji, drawn in a font of other
			// metrics, on a line of their own; render-fpdf's are in the
			// line, in order.
			raw := strings.Join(strings.Fields(rawText(t, pdf)), "")
			for _, want := range []string{"Release🚀", "okbefore✅okafter", "redbefore🚀redafter"} {
				if !strings.Contains(raw, want) {
					t.Errorf("text in drawing order lacks %q:\n%s", want, raw)
				}
			}

			words := pdfcheck.Words(t, pdf)
			find := func(s string) pdfcheck.Word { t.Helper(); return wordIs(t, words, s) }
			const dpi = 144
			w, hgt, pix := pdfcheck.PPM(t, pdf, 1, dpi)
			img := raster{w: w, h: hgt, pix: pix, scale: float64(dpi) / 72}
			between := func(before, after string, r, g, b byte, or, og, ob byte) {
				t.Helper()
				a, z := find(before), find(after)
				box := pdfcheck.Word{XMin: a.XMax, XMax: z.XMin, YMin: a.YMin - 2, YMax: a.YMax + 2}
				if n := img.near(box, 0, r, g, b); n < 20 {
					t.Errorf("%d pixels of #%02x%02x%02x between %q and %q", n, r, g, b, before, after)
				}
				if n := img.near(box, 0, or, og, ob); n > 0 {
					t.Errorf("%d pixels of the other emoji's #%02x%02x%02x between %q and %q", n, or, og, ob, before, after)
				}
			}
			between("okbefore", "okafter", 0x78, 0xb4, 0x46, 0xc8, 0x30, 0x28)
			between("redbefore", "redafter", 0xc8, 0x30, 0x28, 0x78, 0xb4, 0x46)
		})
	}
}

// TestEmojiPresentedByDefault renders shortcodes whose emoji is one
// character below U+1F000 that Unicode presents as emoji (⚡ ☔ ♿, as
// GitHub writes :zap:, :umbrella:, :wheelchair:, without U+FE0F) and that
// DejaVu also has in black: each backend draws them in colour, as GitHub
// shows them, while ♥ (presented as text) stays text.
func TestEmojiPresentedByDefault(t *testing.T) {
	pdfcheck.Require(t)
	md := "zapbefore :zap: zapafter\n\nrainbefore :umbrella: rainafter\n\nchairbefore :wheelchair: chairafter\n\nheartbefore ♥ heartafter\n"
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			resp, pdf := h.post(key, map[string]string{"markdown": md, "pageNumeration": "none"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
			}
			words := pdfcheck.Words(t, pdf)
			find := func(s string) pdfcheck.Word {
				t.Helper()
				for _, w := range words {
					if w.Text == s {
						return w
					}
				}
				t.Fatalf("no %q on the page", s)
				return pdfcheck.Word{}
			}
			const dpi = 144
			w, hgt, pix := pdfcheck.PPM(t, pdf, 1, dpi)
			img := raster{w: w, h: hgt, pix: pix, scale: float64(dpi) / 72}
			// colourful counts the pixels between two words whose channels
			// differ widely: an emoji's colours, not text's grey or slate.
			colourful := func(before, after string) int {
				a, z := find(before), find(after)
				x0, y0, x1, y1 := img.box(pdfcheck.Word{XMin: a.XMax, XMax: z.XMin, YMin: a.YMin - 2, YMax: a.YMax + 2})
				n := 0
				for y := y0; y < y1; y++ {
					for x := x0; x < x1; x++ {
						r, g, b := img.at(x, y)
						if max(r, g, b)-min(r, g, b) > 100 {
							n++
						}
					}
				}
				return n
			}
			for _, name := range []string{"zap", "rain", "chair"} {
				if n := colourful(name+"before", name+"after"); n < 20 {
					t.Errorf("the %s emoji has %d colourful pixels: drawn as black text", name, n)
				}
			}
			if n := colourful("heartbefore", "heartafter"); n > 0 {
				t.Errorf("♥ has %d colourful pixels: drawn as an emoji", n)
			}
		})
	}
}
