package fonts

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-pdf/fpdf"
)

// A document's fonts are embedded as simple TrueType fonts with a custom
// encoding, not through fpdf's UTF-8 font path. Why: for every UTF-8 font,
// fpdf parses the font again to subset it, builds a 64 Ki-entry width
// table, and deflates a 128 KB CIDToGIDMap and the font program with two
// fresh compressors of 1.2 MB each to allocate and zero. That was about
// 1 ms per face, most of the render time of a short document. A simple
// font is written as it is handed over: the compact per-document copy
// (Face.Subset), deflated here with a pooled compressor, and a
// /Differences encoding naming each code's character (uniXXXX), from which
// readers get both the glyph, through the copy's Unicode cmap, and the
// text, so copying and searching work as before.
//
// A simple font has 256 codes, of which fpdf writes widths for 32-255.
// Code 32 is the space in every font and a face's other characters take
// codes 33-255 in ascending order, so a face drawing more than 223 of them
// is embedded as several fonts, each glyph in one of them, and a run of
// text mixing them is drawn in pieces (Embedded.Each).

// perFont is how many characters other than the space one font encodes.
const perFont = 255 - 32

// Embedded draws one face in one document.
type Embedded struct {
	face     *Face
	families []string // fpdf family name of each of the face's fonts
	// codes maps a rune to its font (high byte) and code (low byte); 0 for
	// runes not drawn. ASCII is looked up in an array, the rest in a map.
	ascii [128]uint16
	other map[rune]uint16
	utf8  bool // a UTF-8 font: text is passed through unencoded
}

// Each calls fn for the pieces of s drawn with one font, in order: the
// font's fpdf family, the piece in that font's encoding and its advance in
// 1/1000 em. Runes outside the set the face was embedded for, or that the
// face lacks, are dropped.
func (e *Embedded) Each(s string, fn func(family, text string, advance int)) {
	if e.utf8 {
		w := 0
		for _, r := range s {
			w += e.face.Width(r)
		}
		fn(e.families[0], s, w)
		return
	}
	buf := make([]byte, 0, len(s))
	font, w := -1, 0
	flush := func() {
		if len(buf) > 0 {
			fn(e.families[font], string(buf), w)
		}
		buf, w = buf[:0], 0
	}
	for _, r := range s {
		var c uint16
		if r < utf8.RuneSelf {
			c = e.ascii[r]
		} else {
			c = e.other[r]
		}
		if c == 0 {
			continue
		}
		// The space is code 32 in every font: it never splits a run.
		if f := int(c >> 8); f != font && r != ' ' {
			flush()
			font = f
		} else if font < 0 {
			font = f
		}
		buf = append(buf, byte(c))
		w += e.face.Width(r)
	}
	flush()
}

// Code returns the font of the face's fonts that draws r (an index for
// FamilyOf) and r's code in it; ok is false for a rune Each drops. The
// space is code 32 in every font, and its font is whichever the run it is
// in uses. For a face embedded as simple fonts only (not FullFonts): a
// painter that marks parts of a run draws it code by code.
func (e *Embedded) Code(r rune) (font int, code byte, ok bool) {
	var c uint16
	if r < utf8.RuneSelf {
		c = e.ascii[r]
	} else {
		c = e.other[r]
	}
	return int(c >> 8), byte(c), c != 0
}

// FamilyOf is the fpdf family of the face's font, as Code numbers it.
func (e *Embedded) FamilyOf(font int) string { return e.families[font] }

// Embed adds to pdf the fonts that draw the runes in used with face id and
// returns how to draw text with them. Each font holds only the glyphs of
// its characters (and the parts of composite ones).
func (s *Set) Embed(pdf *fpdf.Fpdf, id ID, used *Runes) *Embedded {
	face := s.faces[id]
	e := &Embedded{face: face}
	var runes []rune
	space := false
	used.Each(func(r rune) {
		switch {
		case !face.Has(r): // the layout draws U+FFFD instead
		case r == ' ':
			space = true
		default:
			runes = append(runes, r)
		}
	})
	for font := 0; font == 0 || font*perFont < len(runes); font++ {
		chunk := runes[font*perFont : min(len(runes), (font+1)*perFont)]
		family := "f" + strconv.Itoa(int(id)) + "." + strconv.Itoa(font)
		e.families = append(e.families, family)
		var set Runes
		if space {
			set.Add(' ')
			e.set(' ', font, 32)
		}
		for i, r := range chunk {
			set.Add(r)
			e.set(r, font, 33+i)
		}
		def, program := s.simpleFont(id, font, space, chunk, &set)
		pdf.AddFontFromBytes(family, "", def, program)
	}
	return e
}

// Family is the fpdf family of the face's first font.
func (e *Embedded) Family() string { return e.families[0] }

func (e *Embedded) set(r rune, font, code int) {
	c := uint16(font<<8 | code)
	if r < utf8.RuneSelf {
		e.ascii[r] = c
		return
	}
	if e.other == nil {
		e.other = make(map[rune]uint16)
	}
	e.other[r] = c
}

// EmbedFull adds the whole font file of face id to pdf through fpdf's UTF-8
// font path, which parses and subsets it for this document alone: the
// naive way, kept to measure what the per-document copies save.
func (s *Set) EmbedFull(pdf *fpdf.Fpdf, id ID) (*Embedded, error) {
	data := s.files[id]
	if data == nil {
		var err error
		if data, err = File(id); err != nil {
			return nil, err
		}
	}
	family := "full" + strconv.Itoa(int(id))
	pdf.AddUTF8FontFromBytes(family, "", data)
	return &Embedded{face: s.faces[id], families: []string{family}, utf8: true}, nil
}

// fontDef is the font definition fpdf's AddFontFromBytes reads, the JSON
// form of its own fontDefType.
type fontDef struct {
	Tp           string
	Name         string
	Desc         fpdf.FontDescType
	Cw           []int
	Enc          string
	Diff         string
	File         string
	OriginalSize int
}

var compressors = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return w
}}

// simpleFont returns the definition and deflated program of font number
// font of face id, encoding the space (if drawn) as 32 and chunk from 33.
func (s *Set) simpleFont(id ID, font int, space bool, chunk []rune, set *Runes) (def, program []byte) {
	face := s.faces[id]
	data := face.Subset(set)
	var z bytes.Buffer
	z.Grow(len(data) * 3 / 4)
	w := compressors.Get().(*zlib.Writer)
	w.Reset(&z)
	_, _ = w.Write(data) // writes to a bytes.Buffer do not fail
	_ = w.Close()
	compressors.Put(w)

	cw := make([]int, 256)
	if space {
		cw[32] = face.Width(' ')
	}
	var diff strings.Builder
	diff.Grow(16 + 9*len(chunk))
	diff.WriteString("32 /space")
	for i, r := range chunk {
		cw[33+i] = face.Width(r)
		fmt.Fprintf(&diff, " /uni%04X", r)
	}
	def, err := json.Marshal(fontDef{
		Tp:           "TrueType",
		Name:         subsetTag(id, space, chunk) + "+" + face.Name,
		Desc:         s.descs[id],
		Cw:           cw,
		Enc:          "cp1252",
		Diff:         diff.String(),
		File:         face.Name + "." + strconv.Itoa(font) + ".z",
		OriginalSize: len(data),
	})
	if err != nil { // only plain values: cannot happen
		panic(err)
	}
	return def, z.Bytes()
}

// subsetTag is the six capital letters before a subset font's name, which
// tell readers that the font holds only some glyphs. It is a hash of the
// face and characters (the space included or not), so that the names of a
// face's several fonts differ, and so, but for hash collisions, do those of
// different subsets in PDFs merged later, which some tools tell apart by
// name alone.
func subsetTag(id ID, space bool, chunk []rune) string {
	h := fnv.New32a()
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(id))
	if space {
		b[0] = 1
	}
	_, _ = h.Write(b[:])
	for _, r := range chunk {
		binary.BigEndian.PutUint32(b[:], uint32(r))
		_, _ = h.Write(b[:])
	}
	n := h.Sum32()
	var tag [6]byte
	for i := range tag {
		tag[i] = byte('A' + n%26)
		n /= 26
	}
	return string(tag[:])
}

// describe returns the font descriptor fpdf derives from face, made once
// per process: fpdf's parse of a copy without glyphs (the metrics it reads
// come from head, hhea, OS/2 and post, which every copy shares). The
// flags say nonsymbolic, so readers map codes to glyphs through the
// encoding's character names and the Unicode cmap.
func describe(face *Face) (fpdf.FontDescType, error) {
	scratch := fpdf.New("P", "pt", "A4", "")
	scratch.AddUTF8FontFromBytes("x", "", face.Subset(&Runes{}))
	if err := scratch.Error(); err != nil {
		return fpdf.FontDescType{}, err
	}
	desc := scratch.GetFontDesc("x", "")
	if desc.Ascent == 0 {
		return fpdf.FontDescType{}, fmt.Errorf("fpdf read no metrics from %s", face.Name)
	}
	const symbolic, nonsymbolic = 1 << 2, 1 << 5
	desc.Flags = desc.Flags&^symbolic | nonsymbolic
	return desc, nil
}
