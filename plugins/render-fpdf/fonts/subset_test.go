package fonts

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
)

// accented is text whose glyphs are composites in DejaVu, some nested three
// deep (Ἄ is Α with a psili-oxia that is itself built from two parts).
const accented = "é ñ Å ǻ Ǻ ő ǅ ά ὧ ῶ Ἄ ΐ ё й Ї ў Ǖ ṩ ẫ ệ ǟ ῗ"

// metrics returns glyph g's advance and left side bearing from hmtx.
func (f *Face) metrics(g uint16) (adv, lsb uint16) {
	be := binary.BigEndian
	if int(g) < f.numHMetrics {
		return be.Uint16(f.hmtx[4*int(g):]), be.Uint16(f.hmtx[4*int(g)+2:])
	}
	return be.Uint16(f.hmtx[4*(f.numHMetrics-1):]), be.Uint16(f.hmtx[4*f.numHMetrics+2*(int(g)-f.numHMetrics):])
}

// sameGlyph compares glyph a of face f with glyph b of face s: outline
// bytes (b may carry up to 3 bytes of zero padding), metrics and,
// recursively, the parts of composite glyphs, whose ids may differ.
func sameGlyph(f *Face, a uint16, s *Face, b uint16) error {
	ga, gb := f.glyphData(a), s.glyphData(b)
	if len(gb) < len(ga) || len(gb)-len(ga) > 3 || !bytes.Equal(gb[len(ga):], make([]byte, len(gb)-len(ga))) {
		return fmt.Errorf("glyph %d: %d bytes, copy's glyph %d: %d", a, len(ga), b, len(gb))
	}
	gb = gb[:len(ga)]
	refsA, refsB := slices.Collect(componentRefs(ga)), slices.Collect(componentRefs(gb))
	if !slices.Equal(refsA, refsB) {
		return fmt.Errorf("glyph %d: parts at %v, copy's glyph %d at %v", a, refsA, b, refsB)
	}
	ca, cb := slices.Clone(ga), slices.Clone(gb)
	for _, at := range refsA {
		ca[at], ca[at+1], cb[at], cb[at+1] = 0, 0, 0, 0
	}
	if !bytes.Equal(ca, cb) {
		return fmt.Errorf("glyph %d and the copy's glyph %d differ", a, b)
	}
	if aa, la := f.metrics(a); true {
		if ab, lb := s.metrics(b); aa != ab || la != lb {
			return fmt.Errorf("glyph %d: metrics %d/%d, copy's glyph %d: %d/%d", a, aa, la, b, ab, lb)
		}
	}
	for _, at := range refsA {
		pa, pb := binary.BigEndian.Uint16(ga[at:]), binary.BigEndian.Uint16(gb[at:])
		if err := sameGlyph(f, pa, s, pb); err != nil {
			return fmt.Errorf("part of glyph %d: %w", a, err)
		}
	}
	return nil
}

// TestSubsetIsCompact parses each face's per-document copy back and checks
// that it holds only the glyphs the runes need, numbered densely, with the
// same outlines, metrics, widths and composite parts as the full face.
func TestSubsetIsCompact(t *testing.T) {
	set := loadSet(t)
	used := runesOf(sample + accented)
	for id := ID(0); id < Count; id++ {
		f := set.Face(id)
		s, err := Parse(f.Name, f.Subset(used))
		if err != nil {
			t.Fatalf("%s: copy does not parse: %v", f.Name, err)
		}
		kept := f.closure(used)
		numGlyphs := int(binary.BigEndian.Uint16(s.maxp[4:]))
		if numGlyphs != len(kept) || len(s.loca) != numGlyphs+1 || s.numHMetrics != numGlyphs ||
			len(s.hmtx) != 4*numGlyphs {
			t.Errorf("%s: numGlyphs %d, loca %d, numberOfHMetrics %d, hmtx %d bytes; %d glyphs kept",
				f.Name, numGlyphs, len(s.loca), s.numHMetrics, len(s.hmtx), len(kept))
		}
		if full := len(f.loca) - 1; numGlyphs > 2*used.Len() || full < 10*numGlyphs {
			t.Errorf("%s: copy has %d glyphs of %d for %d runes", f.Name, numGlyphs, full, used.Len())
		}
		if err := sameGlyph(f, 0, s, 0); err != nil {
			t.Errorf("%s: .notdef: %v", f.Name, err)
		}
		for r := rune(1); r < bmp; r++ {
			if s.Has(r) != (f.Has(r) && used.Has(r)) {
				t.Fatalf("%s: %q in copy %v, in face %v, used %v", f.Name, r, s.Has(r), f.Has(r), used.Has(r))
			}
			if !s.Has(r) {
				continue
			}
			if s.Width(r) != f.Width(r) {
				t.Errorf("%s: %q width %d, face %d", f.Name, r, s.Width(r), f.Width(r))
			}
			if err := sameGlyph(f, f.glyph[r], s, s.glyph[r]); err != nil {
				t.Errorf("%s: %q: %v", f.Name, r, err)
			}
		}
	}
}

// TestSubsetOfNothing is the copy describe has fpdf read a face's metrics from.
func TestSubsetOfNothing(t *testing.T) {
	f := loadSet(t).Face(Of(Sans, Regular))
	s, err := Parse(f.Name, f.Subset(&Runes{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.loca) != 2 || s.Has('a') || s.Ascent != f.Ascent || s.Descent != f.Descent {
		t.Errorf("copy of nothing: %d glyphs, ascent %v descent %v", len(s.loca)-1, s.Ascent, s.Descent)
	}
}

// TestSubsetChecksums checks what a strict reader checks of the embedded
// copies: each table's checksum, and the whole file summing to 0xB1B0AFBA
// with head.checkSumAdjustment in it.
func TestSubsetChecksums(t *testing.T) {
	set := loadSet(t)
	for _, id := range []ID{Of(Sans, Regular), Of(Serif, BoldItalic), Of(Mono, Bold)} {
		font := set.Face(id).Subset(runesOf(sample))
		be := binary.BigEndian
		n := int(be.Uint16(font[4:]))
		for i := range n {
			rec := font[12+16*i:]
			tag, sum, off, size := string(rec[:4]), be.Uint32(rec[4:]), int(be.Uint32(rec[8:])), int(be.Uint32(rec[12:]))
			data := slices.Clone(font[off : off+(size+3)&^3])
			if tag == "head" {
				clear(data[8:12])
			}
			if got := checksum(data); got != sum {
				t.Errorf("%s %s: checksum %#x, recorded %#x", fileNames[id], tag, got, sum)
			}
		}
		if got := checksum(font); got != 0xB1B0AFBA {
			t.Errorf("%s: file sums to %#x, want 0xB1B0AFBA", fileNames[id], got)
		}
	}
}
