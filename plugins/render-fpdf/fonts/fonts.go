// Package fonts embeds the DejaVu TrueType fonts the PDF backend draws with,
// parses each of them once per process, and puts into every document small
// copies holding only the glyphs it draws.
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
	"strings"

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

// ID names one of the twelve faces: Family*4 + Style.
type ID int

// Count is the number of faces.
const Count = 12

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
	faces [Count]*Face
	descs [Count]fpdf.FontDescType
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
	return s, nil
}

// Face returns a face by ID.
func (s *Set) Face(id ID) *Face { return s.faces[id] }

// File returns the embedded TrueType file of a face, for callers that hand
// whole fonts to fpdf (the naive path that benchmarks compare against).
func File(id ID) ([]byte, error) {
	return files.ReadFile(fileNames[id])
}
