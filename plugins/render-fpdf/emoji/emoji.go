// Package emoji finds the colour bitmaps of a CBDT/CBLC emoji font (Noto
// Color Emoji) so that the layout can draw emoji as images: fpdf's fonts
// hold outlines only, and the font has none, and the glyphs it draws
// sequences of characters with (shape.go). A Font is parsed once per
// process and read by any number of documents at once; it holds the file
// and looks each glyph up in place, so nothing is built per character.
package emoji

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/go-text/typesetting/font"
)

// Font is a parsed colour bitmap font.
type Font struct {
	data []byte
	// groups is the format 12 cmap subtable's groups (12 bytes each).
	groups []byte
	cbdt   []byte
	// index is the strike's IndexSubTableArray (8 bytes an entry) within
	// cblc, the CBLC table.
	cblc, index []byte
	indexAt     int // index's offset in cblc
	ppem        int
	// shape is the font's shaping tables (shape.go); shapers pools the
	// per-goroutine state that reads them across the documents of a
	// process.
	shape   *font.Font
	shapers sync.Pool
}

// Glyph is one emoji's bitmap and where it sits, in pixels of the strike,
// whose em is PPEM pixels: BearingX right of the pen, BearingY above the
// baseline, the pen then moving Advance.
type Glyph struct {
	ID                 uint16
	PNG                []byte
	Width, Height      int
	BearingX, BearingY int
	Advance            int
	PPEM               int
}

var errFormat = errors.New("not a CBDT/CBLC colour bitmap font")

// Parse reads a font file's tables. data is kept, not copied.
func Parse(data []byte) (*Font, error) {
	tables := map[string][]byte{}
	if len(data) < 12 {
		return nil, errFormat
	}
	n := int(binary.BigEndian.Uint16(data[4:]))
	for i := 0; i < n; i++ {
		at := 12 + 16*i
		if at+16 > len(data) {
			return nil, errFormat
		}
		tag := string(data[at : at+4])
		off, size := binary.BigEndian.Uint32(data[at+8:]), binary.BigEndian.Uint32(data[at+12:])
		if uint64(off)+uint64(size) > uint64(len(data)) {
			return nil, fmt.Errorf("table %s past the end of the file", tag)
		}
		tables[tag] = data[off : off+size]
	}
	f := &Font{data: data, cbdt: tables["CBDT"], cblc: tables["CBLC"]}
	if f.cbdt == nil || f.cblc == nil || tables["cmap"] == nil {
		return nil, errFormat
	}
	if err := f.cmap(tables["cmap"]); err != nil {
		return nil, err
	}
	if err := f.strike(); err != nil {
		return nil, err
	}
	f.shape = shaper(tables)
	return f, nil
}

// cmap finds the format 12 subtable, the one that maps characters above
// U+FFFF.
func (f *Font) cmap(t []byte) error {
	if len(t) < 4 {
		return errFormat
	}
	n := int(binary.BigEndian.Uint16(t[2:]))
	for i := 0; i < n; i++ {
		rec := 4 + 8*i
		if rec+8 > len(t) {
			return errFormat
		}
		off := int(binary.BigEndian.Uint32(t[rec+4:]))
		if off+16 > len(t) || binary.BigEndian.Uint16(t[off:]) != 12 {
			continue
		}
		groups := int(binary.BigEndian.Uint32(t[off+12:]))
		if off+16+12*groups > len(t) {
			return errors.New("cmap format 12 past the end of its table")
		}
		f.groups = t[off+16 : off+16+12*groups]
		return nil
	}
	return errors.New("no format 12 cmap")
}

// strike picks the largest bitmap size the CBLC table offers.
func (f *Font) strike() error {
	t := f.cblc
	if len(t) < 8 {
		return errFormat
	}
	best := -1
	for i := 0; i < int(binary.BigEndian.Uint32(t[4:])); i++ {
		rec := 8 + 48*i
		if rec+48 > len(t) {
			return errFormat
		}
		arr, count := int(binary.BigEndian.Uint32(t[rec:])), int(binary.BigEndian.Uint32(t[rec+8:]))
		ppem := int(t[rec+45])
		if arr+8*count > len(t) || ppem <= best {
			continue
		}
		best, f.ppem, f.index, f.indexAt = ppem, ppem, t[arr:arr+8*count], arr
	}
	if best <= 0 {
		return errors.New("no bitmap strike")
	}
	return nil
}

// Lookup returns the glyph id of r, or 0.
func (f *Font) Lookup(r rune) uint16 {
	n := len(f.groups) / 12
	i := sort.Search(n, func(i int) bool { return rune(binary.BigEndian.Uint32(f.groups[12*i+4:])) >= r })
	if i == n {
		return 0
	}
	g := f.groups[12*i:]
	start := rune(binary.BigEndian.Uint32(g))
	if r < start {
		return 0
	}
	return uint16(binary.BigEndian.Uint32(g[8:]) + uint32(r-start))
}

// Has reports whether the font draws r.
func (f *Font) Has(r rune) bool {
	if f == nil {
		return false
	}
	_, ok := f.Glyph(r)
	return ok
}

// Glyph returns r's bitmap; false when the font has none, or one in a
// format other than PNG (17, 18, 19).
func (f *Font) Glyph(r rune) (Glyph, bool) {
	return f.GlyphByID(f.Lookup(r))
}

// GlyphByID returns the bitmap of glyph id (from Lookup or Sequence).
func (f *Font) GlyphByID(id uint16) (Glyph, bool) {
	if id == 0 {
		return Glyph{}, false
	}
	for i := 0; i+8 <= len(f.index); i += 8 {
		first, last := binary.BigEndian.Uint16(f.index[i:]), binary.BigEndian.Uint16(f.index[i+2:])
		if id < first || id > last {
			continue
		}
		sub := int(binary.BigEndian.Uint32(f.index[i+4:]))
		g, ok := f.sub(sub, id, first, last)
		g.ID, g.PPEM = id, f.ppem
		return g, ok
	}
	return Glyph{}, false
}

// sub reads glyph id from the index subtable at off from the start of
// the IndexSubTableArray.
func (f *Font) sub(off int, id, first, last uint16) (Glyph, bool) {
	t := f.cblc
	at := f.indexAt + off
	if at < 0 || at+8 > len(t) {
		return Glyph{}, false
	}
	format, imageFormat := binary.BigEndian.Uint16(t[at:]), binary.BigEndian.Uint16(t[at+2:])
	dataOff := int(binary.BigEndian.Uint32(t[at+4:]))
	at += 8
	k := int(id - first)
	var start, end int
	var big []byte // metrics the index holds (formats 2 and 5)
	switch format {
	case 1:
		if at+4*(k+2) > len(t) {
			return Glyph{}, false
		}
		start, end = int(binary.BigEndian.Uint32(t[at+4*k:])), int(binary.BigEndian.Uint32(t[at+4*k+4:]))
	case 2:
		if at+12 > len(t) {
			return Glyph{}, false
		}
		size := int(binary.BigEndian.Uint32(t[at:]))
		big = t[at+4 : at+12]
		start, end = size*k, size*(k+1)
	case 3:
		if at+2*(k+2) > len(t) {
			return Glyph{}, false
		}
		start, end = int(binary.BigEndian.Uint16(t[at+2*k:])), int(binary.BigEndian.Uint16(t[at+2*k+2:]))
	case 4, 5:
		var ids []byte
		var size int
		if format == 4 {
			if at+4 > len(t) {
				return Glyph{}, false
			}
			n := int(binary.BigEndian.Uint32(t[at:]))
			if at+4+4*(n+1) > len(t) {
				return Glyph{}, false
			}
			pairs := t[at+4 : at+4+4*(n+1)]
			for j := 0; j+8 <= len(pairs); j += 4 {
				if binary.BigEndian.Uint16(pairs[j:]) == id {
					start, end = int(binary.BigEndian.Uint16(pairs[j+2:])), int(binary.BigEndian.Uint16(pairs[j+6:]))
					ids = pairs
					break
				}
			}
		} else {
			if at+16 > len(t) {
				return Glyph{}, false
			}
			size = int(binary.BigEndian.Uint32(t[at:]))
			big = t[at+4 : at+12]
			n := int(binary.BigEndian.Uint32(t[at+12:]))
			if at+16+2*n > len(t) {
				return Glyph{}, false
			}
			list := t[at+16 : at+16+2*n]
			for j := 0; j+2 <= len(list); j += 2 {
				if binary.BigEndian.Uint16(list[j:]) == id {
					start, end, ids = size*(j/2), size*(j/2+1), list
					break
				}
			}
		}
		if ids == nil {
			return Glyph{}, false
		}
	default:
		return Glyph{}, false
	}
	if start < 0 || end <= start || dataOff+end > len(f.cbdt) {
		return Glyph{}, false
	}
	return parseImage(f.cbdt[dataOff+start:dataOff+end], imageFormat, big)
}

// parseImage reads a CBDT glyph record of image format 17 (small metrics),
// 18 (big metrics) or 19 (metrics in the index).
func parseImage(b []byte, format uint16, big []byte) (Glyph, bool) {
	var g Glyph
	var m int
	switch format {
	case 17:
		if len(b) < 9 {
			return g, false
		}
		g.Height, g.Width, g.BearingX, g.BearingY, g.Advance = int(b[0]), int(b[1]), int(int8(b[2])), int(int8(b[3])), int(b[4])
		m = 5
	case 18:
		if len(b) < 12 {
			return g, false
		}
		big, m = b, 8
		fallthrough
	case 19:
		if big == nil {
			return g, false
		}
		g.Height, g.Width, g.BearingX, g.BearingY, g.Advance = int(big[0]), int(big[1]), int(int8(big[2])), int(int8(big[3])), int(big[4])
	default:
		return g, false
	}
	if len(b) < m+4 {
		return g, false
	}
	n := int(binary.BigEndian.Uint32(b[m:]))
	if n <= 0 || m+4+n > len(b) || g.Width == 0 || g.Height == 0 {
		return g, false
	}
	g.PNG = b[m+4 : m+4+n]
	return g, true
}
