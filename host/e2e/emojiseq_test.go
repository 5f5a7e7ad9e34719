package e2e

import (
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// emojiSequences are emoji of several characters that Noto Color Emoji
// draws as one glyph of their own, each between two words.
var emojiSequences = []struct{ name, seq string }{
	{"flag", "🇫🇷"},
	{"tone", "👍🏽"},
	{"rainbow", "🏳️\u200d🌈"},
	{"family", "👨\u200d👩\u200d👧"},
	{"scot", "🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"},
	{"key", "1️⃣"},
	{"rocket", "🚀"},
}

// TestEmojiSequencesOnEveryBackend renders flags, a skin tone, ZWJ
// sequences, a tag sequence and a keycap through the whole service on
// each backend: each is drawn as the one glyph the font has for it (the
// French flag's red, not the letter F's cyan that its first character
// is; a brown thumb, not the yellow one; the rainbow's violet, not a
// white flag; Scotland's blue, not a black flag; the family, not the
// man's yellow face), as wide as one emoji, and reads back as its
// characters, in its line.
func TestEmojiSequencesOnEveryBackend(t *testing.T) {
	pdfcheck.Require(t)
	var md strings.Builder
	for _, s := range emojiSequences {
		md.WriteString(s.name + "before " + s.seq + " " + s.name + "after\n\n")
	}
	type colour struct{ r, g, b byte }
	var (
		flagRed       = colour{0xe8, 0x25, 0x38}
		letterCyan    = colour{0x48, 0xc8, 0xe8}
		toneBrown     = colour{0xb8, 0x88, 0x68}
		thumbYellow   = colour{0xf8, 0xc8, 0x28}
		rainbowViolet = colour{0x68, 0x18, 0x88}
		scotBlue      = colour{0x00, 0x68, 0xc0}
	)
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			resp, pdf := h.post(key, map[string]string{"markdown": md.String(), "pageNumeration": "none"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
			}
			raw := strings.Join(strings.Fields(rawText(t, pdf)), "")
			for _, s := range emojiSequences {
				if want := s.name + "before" + s.seq + s.name + "after"; !strings.Contains(raw, want) {
					t.Errorf("text in drawing order lacks %q:\n%q", want, raw)
				}
			}

			words := pdfcheck.Words(t, pdf)
			const dpi = 144
			w, hgt, pix := pdfcheck.PPM(t, pdf, 1, dpi)
			img := raster{w: w, h: hgt, pix: pix, scale: float64(dpi) / 72}
			gap := func(name string) pdfcheck.Word {
				t.Helper()
				a, z := wordIs(t, words, name+"before"), wordIs(t, words, name+"after")
				return pdfcheck.Word{XMin: a.XMax, XMax: z.XMin, YMin: a.YMin - 2, YMax: a.YMax + 2}
			}
			has := func(name string, c colour) int { return img.near(gap(name), 0, c.r, c.g, c.b) }
			for _, c := range []struct {
				name string
				want colour
			}{{"flag", flagRed}, {"tone", toneBrown}, {"rainbow", rainbowViolet}, {"scot", scotBlue}} {
				if n := has(c.name, c.want); n < 20 {
					t.Errorf("%s: %d pixels of #%02x%02x%02x", c.name, n, c.want.r, c.want.g, c.want.b)
				}
			}
			for _, c := range []struct {
				name string
				not  colour
			}{{"flag", letterCyan}, {"tone", thumbYellow}, {"family", thumbYellow}} {
				if n := has(c.name, c.not); n > 0 {
					t.Errorf("%s: %d pixels of #%02x%02x%02x, its first character's", c.name, n, c.not.r, c.not.g, c.not.b)
				}
			}
			// One glyph wide: the space around a sequence is the space
			// around 🚀, within a third of it.
			one := gap("rocket").XMax - gap("rocket").XMin
			for _, s := range emojiSequences {
				if g := gap(s.name); g.XMax-g.XMin > one*4/3 {
					t.Errorf("%s: %.1f pt between its words, 🚀 %.1f pt", s.name, g.XMax-g.XMin, one)
				}
			}
		})
	}
}
