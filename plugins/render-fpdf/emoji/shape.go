package emoji

import (
	"bytes"
	"cmp"
	"slices"
	"unicode/utf8"

	"github.com/go-text/typesetting/di"
	"github.com/go-text/typesetting/font"
	ot "github.com/go-text/typesetting/font/opentype"
	"github.com/go-text/typesetting/language"
	"github.com/go-text/typesetting/shaping"
	"golang.org/x/image/math/fixed"
)

// The font draws a flag, a ZWJ sequence, a skin tone, a keycap or a tag
// sequence as one glyph that its GSUB ligatures choose, which the cmap
// cannot say: go-text's HarfBuzz port shapes each sequence, as HarfBuzz
// does it in Chromium. The shaper reads a copy of the font without its
// bitmaps (CBDT, ~11 MB), which it does not need: ~75 KB of tables, about
// 200 KB of heap once parsed, once per process.

// MaxSequence is the most characters a sequence is shaped with: the
// longest the font draws as one glyph (a kiss with two skin tones) has
// ten. A longer cluster (thousands of joiners) is drawn from its first
// MaxSequence characters, so that no input costs more than its length.
const MaxSequence = 32

// shapeTables are the tables shaping reads; the others (bitmaps, names,
// vertical metrics) stay out of the copy.
var shapeTables = map[string]bool{
	"cmap": true, "head": true, "hhea": true, "hmtx": true, "maxp": true,
	"OS/2": true, "post": true, "GSUB": true, "GDEF": true, "GPOS": true,
}

// shaper parses a font's shaping tables into a font.Font, which any
// number of goroutines may read; nil when they do not parse, and
// sequences are then drawn as their first character, as without shaping.
func shaper(tables map[string][]byte) (ft *font.Font) {
	if tables["GSUB"] == nil {
		return nil
	}
	var ts []ot.Table
	for tag, t := range tables {
		if shapeTables[tag] {
			// Capped: WriteTTF pads a table's length to four by
			// appending to it, which would write into the next table
			// of the file, or fault on the read-only mapping.
			ts = append(ts, ot.Table{Tag: ot.MustNewTag(tag), Content: t[:len(t):len(t)]})
		}
	}
	// The loader searches the directory by tag.
	slices.SortFunc(ts, func(a, b ot.Table) int { return cmp.Compare(a.Tag, b.Tag) })
	// A corrupt table is the library's to refuse; should it panic
	// instead, the font is drawn without shaping rather than the plugin
	// failing to start.
	defer func() {
		if recover() != nil {
			ft = nil
		}
	}()
	ld, err := ot.NewLoader(bytes.NewReader(ot.WriteTTF(ts)))
	if err != nil {
		return nil
	}
	ft, err = font.NewFont(ld)
	if err != nil {
		return nil
	}
	return ft
}

// sequenceShaper is one goroutine's: a font.Face caches lookups and is not
// safe for concurrent use, nor is the HarfBuzz shaper.
type sequenceShaper struct {
	face  *font.Face
	hb    shaping.HarfbuzzShaper
	runes []rune
}

// Sequence appends to dst the glyphs the font draws seq with, in order:
// one for a sequence it has a glyph for, several for one it has not (a
// man, a joiner and a red-haired woman it draws side by side, as
// Chromium does). Glyphs of no advance (the joiner, variation selectors)
// and the missing glyph are left out. Without shaping tables, the glyph
// of seq's first character.
func (f *Font) Sequence(seq string, dst []uint16) []uint16 {
	if f.shape == nil {
		r, _ := utf8.DecodeRuneInString(seq)
		if id := f.Lookup(r); id != 0 {
			dst = append(dst, id)
		}
		return dst
	}
	s, _ := f.shapers.Get().(*sequenceShaper)
	if s == nil {
		s = &sequenceShaper{face: font.NewFace(f.shape)}
	}
	defer f.shapers.Put(s)
	s.runes = s.runes[:0]
	for _, r := range seq {
		if len(s.runes) == MaxSequence {
			break
		}
		s.runes = append(s.runes, r)
	}
	out := s.hb.Shape(shaping.Input{Text: s.runes, RunEnd: len(s.runes), Direction: di.DirectionLTR,
		Face: s.face, Size: fixed.I(int(f.ppem)), Script: language.Common})
	for _, g := range out.Glyphs {
		if g.GlyphID != 0 && g.Advance > 0 && g.GlyphID <= 0xFFFF {
			dst = append(dst, uint16(g.GlyphID))
		}
	}
	return dst
}
