package fonts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Face is one parsed TrueType font: its metrics per character of the Basic
// Multilingual Plane and the raw tables a per-document copy is built from.
type Face struct {
	Name string
	// Ascent and Descent are fractions of the font size above and below the
	// baseline (Descent positive), from the hhea table as fpdf reads them.
	Ascent, Descent float64
	// Bold and Italic are the head table's macStyle bits: what the face is
	// drawn as, so that a style it already has is not synthesized again.
	Bold, Italic bool

	glyph  []uint16 // rune -> glyph id; 0 means the font lacks the rune
	width  []uint16 // rune -> advance in 1/1000 em, rounded the way fpdf rounds
	tables []table  // tables shared by every copy, sorted by tag
	head   []byte
	hhea   []byte
	maxp   []byte
	glyf   []byte
	loca   []uint32 // glyph id -> offset into glyf; one entry more than glyphs
	// hmtx is the font's horizontal metrics: numHMetrics pairs of advance
	// and left side bearing, then bearings alone for the remaining glyphs.
	hmtx        []byte
	numHMetrics int
	upem        float64
}

type table struct {
	tag  string
	data []byte
}

// sharedTables are the tables fpdf reads that every per-document copy
// holds unchanged; none of them refers to glyphs by id. Layout tables
// (GSUB, GPOS, kern, ...) are left out: fpdf never reads them. The tables
// indexed by glyph id or counting glyphs (cmap, glyf, loca, hmtx, hhea,
// maxp) and head are built per document; post is cut to its header, as
// fpdf reads nothing of the glyph names after it, and name to its Windows
// records (windowsNames).
var sharedTables = []string{"OS/2", "cvt ", "fpgm", "gasp", "name", "post", "prep"}

const bmp = 1 << 16

// Parse reads a TrueType font.
func Parse(name string, data []byte) (*Face, error) {
	dir, err := readDirectory(data)
	if err != nil {
		return nil, err
	}
	for _, tag := range []string{"head", "hhea", "hmtx", "maxp", "cmap", "glyf", "loca"} {
		if dir[tag] == nil {
			return nil, fmt.Errorf("missing %q table", tag)
		}
	}
	head, hhea, maxp := dir["head"], dir["hhea"], dir["maxp"]
	if len(head) < 54 || len(hhea) < 36 || len(maxp) < 6 {
		return nil, errors.New("truncated head, hhea or maxp table")
	}
	upem := float64(binary.BigEndian.Uint16(head[18:]))
	if upem == 0 {
		return nil, errors.New("unitsPerEm is 0")
	}
	f := &Face{
		Name:    name,
		Ascent:  float64(int16(binary.BigEndian.Uint16(hhea[4:]))) / upem,
		Descent: -float64(int16(binary.BigEndian.Uint16(hhea[6:]))) / upem,
		upem:    upem,
		Bold:    head[45]&1 != 0,
		Italic:  head[45]&2 != 0,
		glyph:   make([]uint16, bmp),
		width:   make([]uint16, bmp),
	}
	scale := 1000 / upem // multiplied in fpdf's order, for the same rounding
	numGlyphs := int(binary.BigEndian.Uint16(maxp[4:]))
	f.numHMetrics = int(binary.BigEndian.Uint16(hhea[34:]))
	advances, err := readAdvances(dir["hmtx"], f.numHMetrics, numGlyphs)
	if err != nil {
		return nil, err
	}
	if err := readCmap(dir["cmap"], f.glyph); err != nil {
		return nil, err
	}
	for r, g := range f.glyph {
		if g == 0 {
			continue
		}
		if int(g) >= numGlyphs {
			f.glyph[r] = 0
			continue
		}
		f.width[r] = uint16(math.Round(scale * float64(advances[g])))
	}
	if f.loca, err = readLoca(dir["loca"], binary.BigEndian.Uint16(head[50:]), numGlyphs, len(dir["glyf"])); err != nil {
		return nil, err
	}
	f.head, f.hhea, f.maxp, f.hmtx, f.glyf = head, hhea, maxp, dir["hmtx"], dir["glyf"]
	for _, tag := range sharedTables {
		d := dir[tag]
		switch {
		case tag == "post" && len(d) >= 32:
			d = append([]byte{0, 3, 0, 0}, d[4:32]...) // version 3.0: no glyph names
		case tag == "name":
			d = windowsNames(d)
		}
		if d != nil {
			f.tables = append(f.tables, table{tag, d})
		}
	}
	return f, nil
}

// readLoca returns the glyph offsets, checked to be in order and in bounds.
func readLoca(loca []byte, format uint16, numGlyphs, glyfLen int) ([]uint32, error) {
	out := make([]uint32, numGlyphs+1)
	for g := range out {
		switch {
		case format == 0 && 2*g+2 <= len(loca):
			out[g] = 2 * uint32(binary.BigEndian.Uint16(loca[2*g:]))
		case format == 1 && 4*g+4 <= len(loca):
			out[g] = binary.BigEndian.Uint32(loca[4*g:])
		default:
			return nil, errors.New("truncated or unknown loca table")
		}
		if out[g] > uint32(glyfLen) || g > 0 && out[g] < out[g-1] {
			return nil, fmt.Errorf("glyph %d out of bounds", g)
		}
	}
	return out, nil
}

// Has reports whether the face has a glyph for r.
func (f *Face) Has(r rune) bool {
	return r > 0 && r < bmp && f.glyph[r] != 0
}

// Width returns r's advance in 1/1000 em (0 for runes the face lacks).
func (f *Face) Width(r rune) int {
	if r <= 0 || r >= bmp {
		return 0
	}
	return int(f.width[r])
}

// Extent returns how far r's outline reaches above and below the baseline
// (below positive), in fractions of the font size, from its glyph's
// bounding box; false for runes the face lacks. A glyph without outlines
// (a space) reaches nowhere. Math layout places scripts, bars and
// radicals by the ink, as TeX does, where text lines use the face's
// ascent and descent.
func (f *Face) Extent(r rune) (asc, desc float64, ok bool) {
	if !f.Has(r) {
		return 0, 0, false
	}
	g := f.glyph[r]
	off, end := f.loca[g], f.loca[g+1]
	if end-off < 10 {
		return 0, 0, true
	}
	yMin := int16(binary.BigEndian.Uint16(f.glyf[off+4:]))
	yMax := int16(binary.BigEndian.Uint16(f.glyf[off+8:]))
	return float64(yMax) / f.upem, -float64(yMin) / f.upem, true
}

// readDirectory maps table tags to their bytes.
func readDirectory(data []byte) (map[string][]byte, error) {
	if len(data) < 12 {
		return nil, errors.New("not a font: too short")
	}
	switch v := binary.BigEndian.Uint32(data); v {
	case 0x00010000, 0x74727565: // TrueType outlines
	case 0x4f54544f: // "OTTO"
		return nil, errors.New("an OpenType font with CFF outlines (.otf); a TrueType font (.ttf, glyf outlines) is needed")
	case 0x74746366: // "ttcf"
		return nil, errors.New("a font collection (.ttc); a single TrueType font (.ttf) is needed")
	default:
		return nil, fmt.Errorf("not a TrueType font (version %#x)", v)
	}
	n := int(binary.BigEndian.Uint16(data[4:]))
	if len(data) < 12+16*n {
		return nil, errors.New("truncated table directory")
	}
	dir := make(map[string][]byte, n)
	for i := range n {
		rec := data[12+16*i:]
		off, size := binary.BigEndian.Uint32(rec[8:]), binary.BigEndian.Uint32(rec[12:])
		if uint64(off)+uint64(size) > uint64(len(data)) {
			return nil, fmt.Errorf("table %q out of bounds", rec[:4])
		}
		dir[string(rec[:4])] = data[off : off+size : off+size]
	}
	return dir, nil
}

// readAdvances returns every glyph's advance width in font units.
func readAdvances(hmtx []byte, numHMetrics, numGlyphs int) ([]uint16, error) {
	if numHMetrics == 0 || len(hmtx) < 4*numHMetrics {
		return nil, errors.New("truncated hmtx table")
	}
	adv := make([]uint16, max(numGlyphs, numHMetrics))
	for g := range numHMetrics {
		adv[g] = binary.BigEndian.Uint16(hmtx[4*g:])
	}
	for g := numHMetrics; g < len(adv); g++ {
		adv[g] = adv[numHMetrics-1]
	}
	for g, a := range adv {
		if a >= 1<<15 { // fpdf reads advances this large as 0
			adv[g] = 0
		}
	}
	return adv, nil
}

// readCmap fills glyph from the first Unicode BMP (format 4) subtable, the
// only kind fpdf reads, then adds the BMP characters of a format 12
// subtable that the format 4 one leaves out. Why: the copies carry a cmap
// written here, so fpdf never reads the font's own, and a font may map
// most of its characters only in format 12 (Droid Sans Fallback's format 4
// maps 3 of the 11,172 Hangul syllables, its format 12 all of them).
func readCmap(cmap []byte, glyph []uint16) error {
	if len(cmap) < 4 {
		return errors.New("truncated cmap")
	}
	n := int(binary.BigEndian.Uint16(cmap[2:]))
	var format4, format12 []byte
	for i := range n {
		rec := 4 + 8*i
		if rec+8 > len(cmap) {
			break
		}
		platform, encoding := binary.BigEndian.Uint16(cmap[rec:]), binary.BigEndian.Uint16(cmap[rec+2:])
		off := int(binary.BigEndian.Uint32(cmap[rec+4:]))
		if !(platform == 3 && (encoding == 1 || encoding == 10)) && platform != 0 {
			continue
		}
		if off+16 > len(cmap) {
			continue
		}
		switch binary.BigEndian.Uint16(cmap[off:]) {
		case 4:
			if format4 == nil {
				format4 = cmap[off:]
			}
		case 12:
			if format12 == nil {
				format12 = cmap[off:]
			}
		}
	}
	if format4 == nil {
		return errors.New("no Unicode BMP cmap subtable")
	}
	if err := readFormat4(format4, glyph); err != nil {
		return err
	}
	if format12 != nil {
		return readFormat12(format12, glyph)
	}
	return nil
}

// readFormat12 fills the entries of glyph still 0 from a format 12
// subtable's groups, for the BMP.
func readFormat12(sub []byte, glyph []uint16) error {
	be := binary.BigEndian
	groups := int64(be.Uint32(sub[12:]))
	if 16+12*groups > int64(len(sub)) {
		return errors.New("truncated cmap format 12")
	}
	for i := range int(groups) {
		g := sub[16+12*i:]
		start, end, first := be.Uint32(g), be.Uint32(g[4:]), be.Uint32(g[8:])
		for c := start; c <= end && c < 0xFFFF; c++ {
			if id := first + (c - start); glyph[c] == 0 && id <= 0xFFFF {
				glyph[c] = uint16(id)
			}
		}
	}
	return nil
}

func readFormat4(sub []byte, glyph []uint16) error {
	segs := int(binary.BigEndian.Uint16(sub[6:])) / 2
	ends, starts, deltas, ranges := 14, 16+2*segs, 16+4*segs, 16+6*segs
	if ranges+2*segs > len(sub) {
		return errors.New("truncated cmap format 4")
	}
	u16 := func(at int) uint16 {
		if at < 0 || at+2 > len(sub) {
			return 0
		}
		return binary.BigEndian.Uint16(sub[at:])
	}
	for s := range segs {
		end, start := int(u16(ends+2*s)), int(u16(starts+2*s))
		delta, rangeOff := u16(deltas+2*s), int(u16(ranges+2*s))
		for c := start; c <= end && c < 0xFFFF; c++ {
			var g uint16
			if rangeOff == 0 {
				g = uint16(c) + delta
			} else if g = u16(ranges + 2*s + rangeOff + 2*(c-start)); g != 0 {
				g += delta
			}
			glyph[c] = g
		}
	}
	return nil
}
