package emoji

import (
	"bytes"
	"image/png"
	"os"
	"testing"
)

const noto = "/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf"

// TestNotoGlyphs reads glyphs of Noto Color Emoji, Debian's
// fonts-noto-color-emoji: each is a PNG of the strike's size, on the
// baseline, and characters the font lacks have none.
func TestNotoGlyphs(t *testing.T) {
	data, err := os.ReadFile(noto)
	if err != nil {
		t.Skipf("no Noto Color Emoji: %v", err)
	}
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []rune{0x1F680, 0x2705, 0x26A0, 0x1F389, 0x1F44D, 0x1F600, 0x1F1EB} {
		g, ok := f.Glyph(r)
		if !ok {
			t.Errorf("%U: no glyph", r)
			continue
		}
		img, err := png.Decode(bytes.NewReader(g.PNG))
		if err != nil {
			t.Errorf("%U: %v", r, err)
			continue
		}
		if b := img.Bounds(); b.Dx() != g.Width || b.Dy() != g.Height || g.PPEM <= 0 {
			t.Errorf("%U: PNG %v, metrics %dx%d at %d ppem", r, b, g.Width, g.Height, g.PPEM)
		}
		if g.BearingY <= 0 || g.BearingY >= g.Height || g.Advance < g.Width {
			t.Errorf("%U: bearing %d, advance %d for %dx%d", r, g.BearingY, g.Advance, g.Width, g.Height)
		}
	}
	for _, r := range []rune{'a', 0x4E2D, 0x10FFFF, 0xFFFD} {
		if f.Has(r) {
			t.Errorf("%U: a glyph", r)
		}
	}
}

// TestParseRefusesOtherFiles: a font without colour bitmaps, and cut or
// corrupt files, are errors or lack glyphs, and never panic.
func TestParseRefusesOtherFiles(t *testing.T) {
	if _, err := Parse([]byte("not a font")); err == nil {
		t.Error("garbage parsed")
	}
	if dejavu, err := os.ReadFile("../fonts/DejaVuSans.ttf"); err == nil {
		if _, err := Parse(dejavu); err == nil {
			t.Error("DejaVu Sans, which has no CBDT table, parsed")
		}
	}
	data, err := os.ReadFile(noto)
	if err != nil {
		t.Skipf("no Noto Color Emoji: %v", err)
	}
	for _, n := range []int{12, 200, 4096, len(data) / 2} {
		if f, err := Parse(data[:n]); err == nil {
			f.Glyph(0x1F680)
		}
	}
	bad := bytes.Clone(data)
	for i := 200; i < len(bad); i += 997 {
		bad[i] ^= 0xff
	}
	if f, err := Parse(bad); err == nil {
		for r := rune(0x1F300); r < 0x1F700; r++ {
			f.Glyph(r)
		}
	}
}
