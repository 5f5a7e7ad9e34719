package emoji

import (
	"bytes"
	"image/png"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
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
			for _, id := range f.Sequence(string(r)+"\u200d🦰🏽", nil) {
				f.GlyphByID(id)
			}
		}
	}
}

// TestNotoSequences shapes the sequences Noto Color Emoji draws as one
// glyph of its own (flags, ZWJ sequences, skin tones, keycaps, tag
// sequences): each is one glyph, not its first character's; a sequence
// the font has no glyph for is drawn as its parts; a cluster of
// thousands of joiners costs no more than MaxSequence characters. The
// font is opened as the plugin opens it, mapped read-only, which faults
// should parsing write into the file's bytes.
func TestNotoSequences(t *testing.T) {
	if _, err := os.Stat(noto); err != nil {
		t.Skipf("no Noto Color Emoji: %v", err)
	}
	f, err := Open(noto)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint16]string{}
	for _, seq := range []string{"🇫🇷", "🇯🇵", "🇺🇸", "👨\u200d👩\u200d👧", "🏳️\u200d🌈", "👩\u200d💻", "👍🏽", "👋🏿",
		"1️⃣", "#️⃣", "*️⃣", "🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F", "👩🏻\u200d❤️\u200d💋\u200d👨🏼"} {
		ids := f.Sequence(seq, nil)
		first, _ := utf8.DecodeRuneInString(seq)
		if len(ids) != 1 || ids[0] == f.Lookup(first) {
			t.Errorf("%q: glyphs %v, want one other than its first character's (%d)", seq, ids, f.Lookup(first))
			continue
		}
		if other, ok := seen[ids[0]]; ok {
			t.Errorf("%q and %q: the same glyph %d", seq, other, ids[0])
		}
		seen[ids[0]] = seq
		if _, ok := f.GlyphByID(ids[0]); !ok {
			t.Errorf("%q: glyph %d has no bitmap", seq, ids[0])
		}
	}
	if ids := f.Sequence("🚀", nil); len(ids) != 1 || ids[0] != f.Lookup(0x1F680) {
		t.Errorf("🚀: %v, want its cmap glyph %d", ids, f.Lookup(0x1F680))
	}
	// Bald, then red hair: no glyph of the font is both.
	if ids := f.Sequence("👨\u200d🦲\u200d🦰", nil); len(ids) != 2 {
		t.Errorf("a sequence the font lacks: glyphs %v, want two", ids)
	}
	long := "👨" + strings.Repeat("\u200d", 200_000) + "👩"
	start := time.Now()
	ids := f.Sequence(long, nil)
	if took := time.Since(start); len(ids) != 1 || took > time.Second {
		t.Errorf("200,000 joiners: glyphs %v in %v, want the man's alone, at once", ids, took)
	}
}

// FuzzSequence: any string shapes to at most MaxSequence glyphs that all
// have a bitmap or are refused by GlyphByID, without panicking.
func FuzzSequence(f *testing.F) {
	data, err := os.ReadFile(noto)
	if err != nil {
		f.Skipf("no Noto Color Emoji: %v", err)
	}
	font, err := Parse(data)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"🇫🇷", "👨\u200d👩\u200d👧", "1️⃣", "🏴\U000E0067\U000E0062\U000E007F", "\u200d\u200d", "a\xffb", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids := font.Sequence(s, nil)
		if len(ids) > MaxSequence {
			t.Fatalf("%q: %d glyphs", s, len(ids))
		}
		for _, id := range ids {
			font.GlyphByID(id)
		}
	})
}
