// Package fonts embeds the DejaVu TrueType fonts the PDF backend draws with,
// parses each of them once per process, and puts into every document small
// copies holding only the glyphs it draws. An operator's TrueType files
// (WithFallbacks) are parsed and embedded the same way, for the characters
// DejaVu lacks (CJK).
//
// Why: fpdf's own UTF-8 font path parses a TrueType file completely every
// time a document adds it and again when it writes the subset, and spends
// about a millisecond per face writing it (see embed.go). The copies made
// here are built from the parse done once, and handed to fpdf as simple
// fonts it writes as they are.
package fonts

import (
	"embed"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/go-pdf/fpdf"
)

//go:embed *.ttf
var files embed.FS

// Family is a typeface family.
type Family int

const (
	Sans Family = iota
	Serif
	Mono
)

// Style is a face's weight and slant.
type Style int

const (
	Regular Style = iota
	Bold
	Italic
	BoldItalic
)

// ID names a face: one of the twelve DejaVu faces, Family*4 + Style, or
// from Count up a fallback face (Fallbacks), from Count+MaxFallbacks up
// the bold face a fallback font may come with (BoldOf), and last MathAlpha.
type ID int

// Count is the number of DejaVu faces.
const Count = 12

// MaxFallbacks is how many fallback fonts a Set takes. Per-document tables
// are arrays indexed by ID; a few more entries in them cost nothing, and no
// script needs more than a handful of fonts to cover it.
const MaxFallbacks = 8

// MaxFaces bounds the IDs of a Set's faces: DejaVu, fallbacks and their
// bold faces, and MathAlpha.
const MaxFaces = MathAlpha + 1

// Of returns the face ID of a family and style.
func Of(f Family, s Style) ID { return ID(int(f)*4 + int(s)) }

// Family returns the face's family.
func (id ID) Family() Family { return Family(int(id) / 4) }

// Style returns the face's style.
func (id ID) Style() Style { return Style(int(id) % 4) }

// StyleOf combines weight and slant flags.
func StyleOf(bold, italic bool) Style {
	s := Regular
	if bold {
		s |= Bold
	}
	if italic {
		s |= Italic
	}
	return s
}

// fileNames are the embedded files in ID order.
var fileNames = [Count]string{
	"DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSans-Oblique.ttf", "DejaVuSans-BoldOblique.ttf",
	"DejaVuSerif.ttf", "DejaVuSerif-Bold.ttf", "DejaVuSerif-Italic.ttf", "DejaVuSerif-BoldItalic.ttf",
	"DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf", "DejaVuSansMono-Oblique.ttf", "DejaVuSansMono-BoldOblique.ttf",
}

// Set holds every face, parsed. It is read-only after Load and safe for
// concurrent use by any number of documents.
type Set struct {
	faces [MaxFaces]*Face
	descs [MaxFaces]fpdf.FontDescType
	// files are the fallback fonts' files, for EmbedFull; the DejaVu ones
	// are read from the binary.
	files     [MaxFaces][]byte
	fallbacks []ID
	// bold is the bold face of each fallback face that has one, by the
	// fallback's index; 0 for none.
	bold [MaxFallbacks]ID
}

// Load parses the embedded fonts. It costs tens of milliseconds; call it
// once per process and share the Set.
func Load() (*Set, error) {
	s := &Set{}
	for i, name := range fileNames {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		f, err := Parse(strings.TrimSuffix(name, ".ttf"), data)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		s.faces[i] = f
		if s.descs[i], err = describe(f); err != nil {
			return nil, fmt.Errorf("describe %s: %w", name, err)
		}
	}
	if err := s.loadMathAlpha(); err != nil {
		return nil, err
	}
	return s, nil
}

// Face returns a face by ID; nil for a fallback ID the set has no font for.
func (s *Set) Face(id ID) *Face { return s.faces[id] }

// Fallbacks are the IDs of the fallback faces, in the order they are
// consulted.
func (s *Set) Fallbacks() []ID { return s.fallbacks }

// BoldOf returns the bold face of fallback face id, if its font came with
// one.
func (s *Set) BoldOf(id ID) (ID, bool) {
	if id < Count || id >= Count+MaxFallbacks {
		return 0, false
	}
	b := s.bold[id-Count]
	return b, b != 0
}

// FontFile is a TrueType font file an operator gave, and what to call it
// in errors (its path). Bold, for a fallback font, is the file of its
// bold face: the family's own bold, which draws bold text where the
// regular face's outlines would otherwise be stroked thicker.
type FontFile struct {
	Name string
	Data []byte
	Bold *FontFile
}

// WithFallbacks returns a copy of s that also holds the faces of files, to
// draw the characters no DejaVu face has, the first file that has one
// drawing it. Each file is parsed here, once: a file that is not a
// TrueType font with glyf outlines and a Unicode BMP cmap is an error
// naming it. A file's bold face is parsed alike, and is taken as bold
// whatever its head table says, since it was named as such. The copy
// shares s's DejaVu faces.
func (s *Set) WithFallbacks(files ...FontFile) (*Set, error) {
	if len(files) > MaxFallbacks {
		return nil, fmt.Errorf("%d fallback fonts, at most %d", len(files), MaxFallbacks)
	}
	out := *s
	out.fallbacks = nil
	out.bold = [MaxFallbacks]ID{}
	names := map[string]bool{}
	for i := range s.faces[:Count] {
		names[s.faces[i].Name] = true
	}
	add := func(id ID, file FontFile) (*Face, error) {
		name := fontName(file.Name)
		// fpdf keys font programs by this name: two files called alike
		// would share one program.
		for n := 2; names[name]; n++ {
			name = fontName(file.Name) + "-" + strconv.Itoa(n)
		}
		names[name] = true
		f, err := Parse(name, file.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file.Name, err)
		}
		if out.descs[id], err = describe(f); err != nil {
			return nil, fmt.Errorf("%s: %w", file.Name, err)
		}
		out.faces[id], out.files[id] = f, file.Data
		return f, nil
	}
	for i, file := range files {
		id := ID(Count + i)
		if _, err := add(id, file); err != nil {
			return nil, err
		}
		out.fallbacks = append(out.fallbacks, id)
		if file.Bold == nil {
			continue
		}
		bold := ID(Count + MaxFallbacks + i)
		f, err := add(bold, *file.Bold)
		if err != nil {
			return nil, err
		}
		f.Bold = true
		out.bold[i] = bold
	}
	return &out, nil
}

// fontName is the PostScript-safe name of a fallback font's face, from its
// file's name: a PDF name with a space or bracket in it would end there.
func fontName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	name := strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return -1
	}, base)
	if name == "" {
		return "Fallback"
	}
	return name
}

// File returns the embedded TrueType file of a face, for callers that hand
// whole fonts to fpdf (the naive path that benchmarks compare against).
func File(id ID) ([]byte, error) {
	if id == MathAlpha {
		return files.ReadFile(mathAlphaFile)
	}
	return files.ReadFile(fileNames[id])
}
