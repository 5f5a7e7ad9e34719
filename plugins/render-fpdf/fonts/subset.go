package fonts

import (
	"encoding/binary"
	"math/bits"
)

// Runes is a set of Basic Multilingual Plane characters.
type Runes struct {
	words [bmp / 64]uint64
	n     int
}

// Add puts r in the set; runes outside the BMP are ignored.
func (s *Runes) Add(r rune) {
	if r <= 0 || r >= bmp {
		return
	}
	w, b := r/64, uint64(1)<<(r%64)
	if s.words[w]&b == 0 {
		s.words[w] |= b
		s.n++
	}
}

// Has reports whether r is in the set.
func (s *Runes) Has(r rune) bool {
	return r > 0 && r < bmp && s.words[r/64]&(1<<(r%64)) != 0
}

// Len is the number of runes in the set.
func (s *Runes) Len() int { return s.n }

// Each calls fn for every rune in ascending order.
func (s *Runes) Each(fn func(rune)) {
	for i, w := range s.words {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			fn(rune(i*64 + b))
			w &^= 1 << b
		}
	}
}

// Subset returns a TrueType font with the face's glyphs and metrics whose
// cmap maps only the runes in used (those the face has). fpdf parses it and
// writes its own, glyph-level subset into the PDF; the smaller cmap is what
// saves it the work.
func (f *Face) Subset(used *Runes) []byte {
	cmap := f.cmapFor(used)
	tabs := make([]table, 0, len(f.tables)+1)
	inserted := false
	for _, t := range f.tables {
		if !inserted && t.tag > "cmap" {
			tabs = append(tabs, table{"cmap", cmap})
			inserted = true
		}
		tabs = append(tabs, t)
	}
	if !inserted {
		tabs = append(tabs, table{"cmap", cmap})
	}
	return assemble(tabs)
}

// cmapFor builds a cmap table with one format 4 subtable (Windows, Unicode
// BMP). Runs of consecutive runes with consecutive glyphs share a segment.
func (f *Face) cmapFor(used *Runes) []byte {
	type seg struct{ start, end, glyph int }
	var segs []seg
	used.Each(func(r rune) {
		g := int(f.glyph[r])
		if g == 0 {
			return
		}
		if n := len(segs); n > 0 {
			last := &segs[n-1]
			if int(r) == last.end+1 && g == last.glyph+int(r)-last.start {
				last.end = int(r)
				return
			}
		}
		segs = append(segs, seg{int(r), int(r), g})
	})
	segs = append(segs, seg{0xFFFF, 0xFFFF, 0}) // required final segment, maps to glyph 0
	n := len(segs)
	searchRange := 2
	entrySelector := 0
	for searchRange*2 <= 2*n {
		searchRange *= 2
		entrySelector++
	}
	subLen := 16 + 8*n
	out := make([]byte, 12+subLen)
	be := binary.BigEndian
	be.PutUint16(out[0:], 0)  // cmap version
	be.PutUint16(out[2:], 1)  // one subtable
	be.PutUint16(out[4:], 3)  // platform: Windows
	be.PutUint16(out[6:], 1)  // encoding: Unicode BMP
	be.PutUint32(out[8:], 12) // subtable offset
	sub := out[12:]
	be.PutUint16(sub[0:], 4)
	be.PutUint16(sub[2:], uint16(subLen))
	be.PutUint16(sub[6:], uint16(2*n))
	be.PutUint16(sub[8:], uint16(searchRange))
	be.PutUint16(sub[10:], uint16(entrySelector))
	be.PutUint16(sub[12:], uint16(2*n-searchRange))
	ends, starts, deltas := sub[14:], sub[16+2*n:], sub[16+4*n:]
	for i, s := range segs {
		be.PutUint16(ends[2*i:], uint16(s.end))
		be.PutUint16(starts[2*i:], uint16(s.start))
		delta := uint16(s.glyph - s.start) // modulo 65536, as the format defines
		if s.start == 0xFFFF {
			delta = 1
		}
		be.PutUint16(deltas[2*i:], delta)
		// idRangeOffset stays 0: every segment maps by delta.
	}
	return out
}

// assemble writes an sfnt file from tables sorted by tag. Checksums are left
// zero: fpdf recomputes them for the font it embeds.
func assemble(tabs []table) []byte {
	n := len(tabs)
	size := 12 + 16*n
	for _, t := range tabs {
		size += (len(t.data) + 3) &^ 3
	}
	out := make([]byte, size)
	be := binary.BigEndian
	searchRange, entrySelector := 1, 0
	for searchRange*2 <= n {
		searchRange *= 2
		entrySelector++
	}
	be.PutUint32(out[0:], 0x00010000)
	be.PutUint16(out[4:], uint16(n))
	be.PutUint16(out[6:], uint16(16*searchRange))
	be.PutUint16(out[8:], uint16(entrySelector))
	be.PutUint16(out[10:], uint16(16*n-16*searchRange))
	off := 12 + 16*n
	for i, t := range tabs {
		rec := out[12+16*i:]
		copy(rec, t.tag)
		be.PutUint32(rec[8:], uint32(off))
		be.PutUint32(rec[12:], uint32(len(t.data)))
		copy(out[off:], t.data)
		off += (len(t.data) + 3) &^ 3
	}
	return out
}
