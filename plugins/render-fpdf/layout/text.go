package layout

import (
	"strings"
	"unicode/utf8"

	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
)

// style is how a run of inline content looks. Styles are shared by pointer
// between atoms and never changed once built.
type style struct {
	family       fonts.Family
	bold, italic bool
	size         float64
	color        RGB
	underline    bool
	strike       bool
	code         bool    // shaded like inline code
	rise         float64 // baseline shift up (superscript) or down (negative)
	link         string  // URI, or "#name" for an anchor in the document
}

func (s *style) face() fonts.ID { return fonts.Of(s.family, fonts.StyleOf(s.bold, s.italic)) }

// with returns a copy of s changed by fn.
func (s *style) with(fn func(*style)) *style {
	c := *s
	fn(&c)
	return &c
}

type atomKind uint8

const (
	aText       atomKind = iota
	aSpace               // a break opportunity, drawn only inside a line
	aBreak               // a forced line break
	aImage               // an image small enough to sit in a line
	aBlockImage          // an image placed on lines of its own
	aAnchor              // a named position, zero width
	aHyphen              // a soft hyphen: a break opportunity drawn as "-" only where a line breaks
	aEmoji               // an emoji drawn as an image, text its characters (emoji.go)
	aMath                // a formula (math.go), text its TeX
	aBlockMath           // a display formula, on lines of its own where text flows
)

// atom is the unit of line breaking: a run of text in one face with no
// break opportunity inside, a space, a forced break, an image or an anchor.
type atom struct {
	kind atomKind
	// wrap says a line may break after this text atom although no space
	// follows: between ideographs (breakBetween). It sits in kind's
	// padding, so atoms are no larger for it.
	wrap bool
	// reversed says the text has been put into display order, its
	// brackets mirrored (bidi.go). It sits in kind's padding too.
	reversed bool
	face     fonts.ID
	text     string
	w        float64
	st       *style
	img      int     // an image's or emoji's index in Doc.Images, a formula's in engine.maths
	imgH     float64 // an image's height; a formula's scale
}

// replacement stands in for characters no embedded font has (CJK, emoji,
// scripts outside DejaVu): one visible U+FFFD per character rather than the
// silent gap fpdf would leave.
const replacement = '\uFFFD'

const softHyphen = '\u00AD'

// dropped reports characters that are not drawn at all: C0 and C1 controls,
// soft hyphens, zero-width characters and variation selectors, which carry
// no glyph of their own.
func dropped(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r == 0xad, r >= 0x200b && r <= 0x200f, r >= 0x2060 && r <= 0x2064, r == 0xfeff:
		return true
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef:
		return true
	}
	return false
}

// resolve picks the face that draws r: the wanted face, else DejaVu Sans in
// the same style (the widest coverage), else upright DejaVu Sans of the
// same weight (the oblique faces have no Arabic, and a browser draws text
// its italic font lacks upright too), else the first of the operator's
// fallback fonts that has it (in its bold face for bold text when the
// operator gave one that has r; the painter synthesizes the bold and
// italic a font lacks, see synthetic), else the replacement character.
func (e *engine) resolve(r rune, want fonts.ID) (rune, fonts.ID) {
	if e.fonts.Face(want).Has(r) {
		return r, want
	}
	if alt := fonts.Of(fonts.Sans, want.Style()); e.fonts.Face(alt).Has(r) {
		return r, alt
	}
	if alt := fonts.Of(fonts.Sans, want.Style()&^fonts.Italic); e.fonts.Face(alt).Has(r) {
		return r, alt
	}
	for _, id := range e.fonts.Fallbacks() {
		if e.fonts.Face(id).Has(r) {
			if want.Style()&fonts.Bold != 0 {
				if b, ok := e.fonts.BoldOf(id); ok && e.fonts.Face(b).Has(r) {
					return r, b
				}
			}
			return r, id
		}
	}
	if e.fonts.Face(want).Has(replacement) {
		return replacement, want
	}
	return replacement, fonts.Of(fonts.Sans, fonts.Regular)
}

// width returns the advance of s in face at size.
func (e *engine) width(s string, face fonts.ID, size float64) float64 {
	f := e.fonts.Face(face)
	w := 0
	for _, r := range s {
		w += f.Width(r)
	}
	return float64(w) * size / 1000
}

// textAtoms appends the atoms of flowing text: runs of spaces become one
// break opportunity, other characters are grouped by the face that draws
// them, and split where a line may break between them (CJK).
func (e *engine) textAtoms(out []atom, s string, st *style) []atom {
	want := st.face()
	var b strings.Builder
	cur := want
	w := 0
	// prev is the character before, for breaks between ideographs, also
	// across a change of style (the atoms before this text are in out).
	var prev rune
	if n := len(out); n > 0 && out[n-1].kind == aText {
		prev, _ = utf8.DecodeLastRuneInString(out[n-1].text)
	}
	flush := func() {
		if b.Len() > 0 {
			e.atom()
			out = append(out, atom{kind: aText, face: cur, text: b.String(), w: float64(w) * st.size / 1000, st: st})
			b.Reset()
			w = 0
		}
	}
	skip := 0 // the end of an emoji sequence drawn as one glyph
	for i, r := range s {
		if i < skip {
			continue
		}
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			flush()
			prev = 0
			if n := len(out); n > 0 && out[n-1].kind == aSpace {
				continue
			}
			e.atom()
			out = append(out, atom{kind: aSpace, face: want, text: " ", w: e.width(" ", want, st.size), st: st})
			continue
		}
		if r == softHyphen {
			flush()
			prev = 0
			e.atom()
			out = append(out, atom{kind: aHyphen, face: want, st: st})
			continue
		}
		if r == zwj || r == zwnj {
			// Kept for shape, which removes them.
			b.WriteRune(r)
			continue
		}
		if dropped(r) {
			continue
		}
		if prev != 0 && breakBetween(prev, r) {
			flush()
			if n := len(out); n > 0 && (out[n-1].kind == aText || out[n-1].kind == aEmoji) {
				out[n-1].wrap = true
			}
		}
		prev = r
		rr, face := e.resolve(r, want)
		// The bytes read, not utf8.RuneLen(r): an invalid byte reads as
		// U+FFFD, one byte of the three that rune is written in, and the
		// tree's text is a third-party parser's bytes.
		_, size := utf8.DecodeRuneInString(s[i:])
		a, n, ok := e.emojiAt(s[i:], r, size, rr, st)
		if ok {
			flush()
			out = append(out, a)
			skip = i + n
			continue
		}
		skip = i + n
		r = rr
		if face != cur {
			flush()
			cur = face
		}
		b.WriteRune(r)
		w += e.fonts.Face(face).Width(r)
	}
	flush()
	return out
}

// preRun is a piece of a line of preformatted text in one style: a code
// line is one, or one a highlighted token.
type preRun struct {
	text string
	st   *style
}

// preAtoms returns one line of preformatted text (a code line): spaces are
// kept, tabs become spaces to the next stop of four, counted across the
// line's runs. A line too long for its column wraps at its spaces, as the
// themes' white-space: pre-wrap wraps it on Chromium, but not within its
// indentation, which stays with the text it indents.
func (e *engine) preAtoms(line []preRun) []atom {
	var out []atom
	var b strings.Builder
	var st *style
	var cur, want fonts.ID
	w, col := 0, 0
	indent := true // no character but spaces yet
	flush := func() {
		if b.Len() > 0 {
			e.atom()
			out = append(out, atom{kind: aText, face: cur, text: b.String(), w: float64(w) * st.size / 1000, st: st})
			b.Reset()
			w = 0
		}
	}
	put := func(r rune, face fonts.ID) {
		if r == ' ' && !indent {
			flush()
			e.atom()
			out = append(out, atom{kind: aSpace, face: want, text: " ", w: e.width(" ", want, st.size), st: st})
			col++
			return
		}
		indent = indent && r == ' '
		if face != cur {
			flush()
			cur = face
		}
		b.WriteRune(r)
		w += e.fonts.Face(face).Width(r)
		col++
	}
	for _, run := range line {
		if run.st != st {
			flush()
			st = run.st
			want = st.face()
			cur = want
		}
		skip := 0
		for i, r := range run.text {
			if i < skip {
				continue
			}
			switch {
			case r == '\t':
				for n := 4 - col%4; n > 0; n-- {
					put(' ', want)
				}
			case r == zwj || r == zwnj:
				b.WriteRune(r) // kept for shape, which removes them
			case r == '\r' || dropped(r):
			default:
				rr, face := e.resolve(r, want)
				_, size := utf8.DecodeRuneInString(run.text[i:]) // as in textAtoms
				a, n, ok := e.emojiAt(run.text[i:], r, size, rr, st)
				if ok {
					flush()
					out = append(out, a)
					skip, col = i+n, col+2 // an emoji takes two columns in a terminal
					indent = false
					continue
				}
				skip = i + n
				put(rr, face)
			}
		}
	}
	flush()
	return e.shape(out)
}
