package fonts

import (
	"encoding/binary"
	"iter"
	"math/bits"
	"slices"
	"strings"
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

// Subset returns a compact TrueType font for one document. Its cmap maps
// only the runes in used (those the face has), and it holds only the glyphs
// they need: .notdef, their own glyphs and, transitively, the parts of
// composite glyphs, renumbered densely. fpdf parses it and writes its own
// subset into the PDF; it walks hmtx, loca and its glyph maps by glyph
// count, so a font of a few dozen glyphs rather than six thousand is what
// saves it the work. The glyphs keep their original order, so fpdf numbers
// the glyphs it embeds exactly as it would from the full font. The result
// is always well formed: fpdf reports malformed fonts by printing to
// stdout, which in a plugin would corrupt the go-plugin handshake.
func (f *Face) Subset(used *Runes) []byte {
	ids := f.closure(used)
	glyf, loca := f.glyphTables(ids)
	head := slices.Clone(f.head)
	binary.BigEndian.PutUint16(head[50:], 1) // indexToLocFormat: long
	tabs := append([]table{
		{"cmap", f.cmapFor(used, ids)},
		{"glyf", glyf},
		{"head", head},
		{"hhea", withUint16(f.hhea, 34, len(ids))}, // numberOfHMetrics
		{"hmtx", f.hmtxFor(ids)},
		{"loca", loca},
		{"maxp", withUint16(f.maxp, 4, len(ids))}, // numGlyphs
	}, f.tables...)
	slices.SortFunc(tabs, func(a, b table) int { return strings.Compare(a.tag, b.tag) })
	return assemble(tabs)
}

// closure returns, in ascending order, the original ids of the glyphs a
// copy for used keeps: .notdef, the glyphs of the used runes, and every
// glyph a kept composite glyph is built from.
func (f *Face) closure(used *Runes) []uint16 {
	n := len(f.loca) - 1
	seen := make([]uint64, (n+63)/64)
	ids := make([]uint16, 0, used.Len()+1)
	push := func(g uint16) {
		if int(g) < n && seen[g/64]&(1<<(g%64)) == 0 {
			seen[g/64] |= 1 << (g % 64)
			ids = append(ids, g)
		}
	}
	push(0)
	used.Each(func(r rune) { push(f.glyph[r]) })
	for i := 0; i < len(ids); i++ { // ids grows as components are found
		for _, c := range components(f.glyphData(ids[i])) {
			push(c)
		}
	}
	slices.Sort(ids)
	return ids
}

func (f *Face) glyphData(g uint16) []byte { return f.glyf[f.loca[g]:f.loca[g+1]] }

// newID returns the id in a copy keeping ids of the original glyph g; a
// glyph the copy lacks becomes .notdef.
func newID(ids []uint16, g uint16) uint16 {
	i, ok := slices.BinarySearch(ids, g)
	if !ok {
		return 0
	}
	return uint16(i)
}

// glyphTables returns glyf and loca tables (long offsets) holding the
// glyphs ids under their new ids, with composite glyphs' references to
// their parts rewritten to match.
func (f *Face) glyphTables(ids []uint16) (glyf, loca []byte) {
	size := 0
	for _, g := range ids {
		size += (len(f.glyphData(g)) + 3) &^ 3
	}
	glyf = make([]byte, 0, size)
	loca = make([]byte, 4*(len(ids)+1))
	be := binary.BigEndian
	for i, g := range ids {
		be.PutUint32(loca[4*i:], uint32(len(glyf)))
		start := len(glyf)
		glyf = append(glyf, f.glyphData(g)...)
		for at := range componentRefs(glyf[start:]) {
			ref := glyf[start+at:]
			be.PutUint16(ref, newID(ids, be.Uint16(ref)))
		}
		for len(glyf)%4 != 0 {
			glyf = append(glyf, 0)
		}
	}
	be.PutUint32(loca[4*len(ids):], uint32(len(glyf)))
	return glyf, loca
}

// hmtxFor returns the horizontal metrics of the glyphs ids, one full
// advance and bearing pair each; a glyph past the font's numberOfHMetrics
// takes the last advance, as the format defines.
func (f *Face) hmtxFor(ids []uint16) []byte {
	out := make([]byte, 4*len(ids))
	last := 4 * (f.numHMetrics - 1)
	for i, g := range ids {
		m := out[4*i : 4*i+4]
		if int(g) < f.numHMetrics {
			copy(m, f.hmtx[4*int(g):])
			continue
		}
		copy(m[:2], f.hmtx[last:])
		if at := 4*f.numHMetrics + 2*(int(g)-f.numHMetrics); at+2 <= len(f.hmtx) {
			copy(m[2:], f.hmtx[at:])
		}
	}
	return out
}

// withUint16 returns a copy of b with v written at offset at.
func withUint16(b []byte, at, v int) []byte {
	out := slices.Clone(b)
	binary.BigEndian.PutUint16(out[at:], uint16(v))
	return out
}

// components returns the glyph ids a composite glyph is built from.
func components(g []byte) []uint16 {
	var out []uint16
	for at := range componentRefs(g) {
		out = append(out, binary.BigEndian.Uint16(g[at:]))
	}
	return out
}

// componentRefs yields the offsets in a composite glyph of the glyph ids of
// its parts; a simple or empty glyph has none.
func componentRefs(g []byte) iter.Seq[int] {
	return func(yield func(int) bool) {
		if len(g) < 10 || int16(binary.BigEndian.Uint16(g)) >= 0 {
			return
		}
		const (
			argWords = 0x0001
			hasScale = 0x0008
			more     = 0x0020
			hasXY    = 0x0040
			twoByTwo = 0x0080
		)
		for at := 10; at+4 <= len(g); {
			flags := binary.BigEndian.Uint16(g[at:])
			if !yield(at + 2) {
				return
			}
			at += 4
			if flags&argWords != 0 {
				at += 4
			} else {
				at += 2
			}
			switch {
			case flags&hasScale != 0:
				at += 2
			case flags&hasXY != 0:
				at += 4
			case flags&twoByTwo != 0:
				at += 8
			}
			if flags&more == 0 {
				return
			}
		}
	}
}

// cmapFor builds a cmap table with one format 4 subtable (Windows, Unicode
// BMP) mapping the used runes to their glyphs' ids in the copy. Runs of consecutive runes with consecutive glyphs share a segment.
func (f *Face) cmapFor(used *Runes, ids []uint16) []byte {
	type seg struct{ start, end, glyph int }
	var segs []seg
	used.Each(func(r rune) {
		if f.glyph[r] == 0 {
			return
		}
		g := int(newID(ids, f.glyph[r]))
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

// assemble writes an sfnt file from tables sorted by tag, with the table
// checksums and head.checkSumAdjustment set: the file is embedded as it is,
// and strict readers (preflight tools, font loaders) check them.
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
	head := -1
	for i, t := range tabs {
		rec := out[12+16*i:]
		copy(rec, t.tag)
		padded := out[off : off+(len(t.data)+3)&^3]
		copy(padded, t.data)
		if t.tag == "head" && len(t.data) >= 12 {
			head = off
			clear(padded[8:12]) // checkSumAdjustment is summed as zero
		}
		be.PutUint32(rec[4:], checksum(padded))
		be.PutUint32(rec[8:], uint32(off))
		be.PutUint32(rec[12:], uint32(len(t.data)))
		off += len(padded)
	}
	if head >= 0 {
		be.PutUint32(out[head+8:], 0xB1B0AFBA-checksum(out))
	}
	return out
}

// checksum is the sfnt checksum of b, whose length is a multiple of 4: the
// sum of its big-endian 32-bit words, modulo 2^32.
func checksum(b []byte) uint32 {
	var sum uint32
	for i := 0; i+4 <= len(b); i += 4 {
		sum += binary.BigEndian.Uint32(b[i:])
	}
	return sum
}
