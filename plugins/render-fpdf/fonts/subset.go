package fonts

import (
	"encoding/binary"
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

// Subset returns a TrueType font with the face's metrics whose cmap maps
// only the runes in used (those the face has). fpdf parses it and writes
// its own, glyph-level subset into the PDF; the smaller cmap is what saves
// it the work. The result is always well formed: fpdf reports malformed
// fonts by printing to stdout, which in a plugin would corrupt the
// go-plugin handshake.
func (f *Face) Subset(used *Runes) []byte {
	glyf, loca, head := f.glyphsFor(used)
	tabs := append([]table{{"cmap", f.cmapFor(used)}, {"glyf", glyf}, {"head", head}, {"loca", loca}}, f.tables...)
	slices.SortFunc(tabs, func(a, b table) int { return strings.Compare(a.tag, b.tag) })
	return assemble(tabs)
}

// glyphsFor returns glyf and loca tables (long offsets) in which only the
// glyphs of the used runes, the .notdef glyph and the parts of composite
// glyphs keep their outlines; every other glyph is empty. Glyph ids do not
// change, so hmtx and composite references stay valid. It also returns the
// head table, marked for long loca offsets.
func (f *Face) glyphsFor(used *Runes) (glyf, loca, head []byte) {
	n := len(f.loca) - 1
	keep := make([]bool, n)
	var stack []uint16
	push := func(g uint16) {
		if int(g) < n && !keep[g] {
			keep[g] = true
			stack = append(stack, g)
		}
	}
	push(0)
	used.Each(func(r rune) { push(f.glyph[r]) })
	for len(stack) > 0 {
		g := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range components(f.glyf[f.loca[g]:f.loca[g+1]]) {
			push(c)
		}
	}
	size := 0
	for g, k := range keep {
		if k {
			size += int(f.loca[g+1]-f.loca[g]+3) &^ 3
		}
	}
	glyf = make([]byte, 0, size)
	loca = make([]byte, 4*(n+1))
	for g, k := range keep {
		binary.BigEndian.PutUint32(loca[4*g:], uint32(len(glyf)))
		if k {
			glyf = append(glyf, f.glyf[f.loca[g]:f.loca[g+1]]...)
			for len(glyf)%4 != 0 {
				glyf = append(glyf, 0)
			}
		}
	}
	binary.BigEndian.PutUint32(loca[4*n:], uint32(len(glyf)))
	head = slices.Clone(f.head)
	binary.BigEndian.PutUint16(head[50:], 1) // indexToLocFormat: long
	return glyf, loca, head
}

// components returns the glyph ids a composite glyph is built from.
func components(g []byte) []uint16 {
	if len(g) < 10 || int16(binary.BigEndian.Uint16(g)) >= 0 {
		return nil // empty or a simple glyph
	}
	const (
		argWords = 0x0001
		hasScale = 0x0008
		more     = 0x0020
		hasXY    = 0x0040
		twoByTwo = 0x0080
	)
	var out []uint16
	for at := 10; at+4 <= len(g); {
		flags := binary.BigEndian.Uint16(g[at:])
		out = append(out, binary.BigEndian.Uint16(g[at+2:]))
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
			break
		}
	}
	return out
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
