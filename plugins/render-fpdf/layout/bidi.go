package layout

import (
	"sort"
	"strings"

	"golang.org/x/text/unicode/bidi"
)

// fpdf draws a string's characters left to right in the order given, so
// Hebrew and Arabic written in logical order came out mirrored: each word
// spelt backwards, and readers (pdftotext too) read it so. A line is put
// into display order here, by the parts of the Unicode bidirectional
// algorithm (UAX #9) that apply to a paragraph without explicit
// embeddings, left to right or right to left as its first strong
// character makes it (direction.go), as the Chromium backend shows
// Markdown: runs of right-to-left text and the numbers inside them are
// reversed, neutrals between two runs of one direction join them, others
// take the paragraph's, and marks stay on the letter they belong to.

// Resolved bidi levels: in a left-to-right paragraph 0 left to right, 1
// right to left, 2 a number inside right-to-left text; in a right-to-left
// one 1 right to left, 2 left to right and numbers.
type bidiClass uint8

const (
	bL bidiClass = iota
	bR
	bEN // a European number
	bAN // an Arabic number
	bN  // a neutral or separator still to resolve
	bCS // a common separator (between numbers)
	bES // a European separator (+ -)
	bET // a European terminator (% $ #)
)

// hasRTL reports whether s holds a right-to-left letter; everything below
// U+0590 is left to right or neutral, so most text costs a comparison a
// character.
func hasRTL(s string) bool {
	for _, r := range s {
		if r >= 0x590 {
			if c := classOf(r); c == bR {
				return true
			}
		}
	}
	return false
}

func classOf(r rune) bidiClass {
	p, _ := bidi.LookupRune(r)
	switch p.Class() {
	case bidi.L:
		return bL
	case bidi.R, bidi.AL:
		return bR
	case bidi.EN:
		return bEN
	case bidi.AN:
		return bAN
	case bidi.CS:
		return bCS
	case bidi.ES:
		return bES
	case bidi.ET:
		return bET
	}
	return bN
}

func isMark(r rune) bool {
	p, _ := bidi.LookupRune(r)
	return p.Class() == bidi.NSM
}

// levels resolves the embedding level of each class in a paragraph whose
// direction is para, bL or bR (rules W1-W7, N0-N2, I1-I2 of UAX #9). cls
// holds the classes of the line's characters with marks already given
// their base's class (W1); pairs the bracket pairs, as indexes of the
// opening and closing one.
func levels(cls []bidiClass, pairs [][2]int, para bidiClass) []uint8 {
	n := len(cls)
	// W2: a European number after Arabic letters is an Arabic number; the
	// class table has folded AL into R, so that distinction is dropped:
	// both end up at level 2 in right-to-left text, as W7 leaves them.
	// W4: one separator between two numbers of a kind joins them.
	for i := 1; i+1 < n; i++ {
		if (cls[i] == bCS || cls[i] == bES) && cls[i-1] == bEN && cls[i+1] == bEN {
			cls[i] = bEN
		} else if cls[i] == bCS && cls[i-1] == bAN && cls[i+1] == bAN {
			cls[i] = bAN
		}
	}
	// W5: terminators next to a European number belong to it.
	for i := 0; i < n; i++ {
		if cls[i] != bET {
			continue
		}
		j := i
		for j < n && cls[j] == bET {
			j++
		}
		if (i > 0 && cls[i-1] == bEN) || (j < n && cls[j] == bEN) {
			for k := i; k < j; k++ {
				cls[k] = bEN
			}
		}
		i = j - 1
	}
	// W6: remaining separators and terminators are neutral. W7: a European
	// number whose last strong letter is left to right (or none in a
	// left-to-right paragraph) is too.
	strong := para
	for i, c := range cls {
		switch c {
		case bCS, bES, bET:
			cls[i] = bN
		case bL, bR:
			strong = c
		case bEN:
			if strong == bL {
				cls[i] = bL
			}
		}
	}
	// N0: a bracket pair takes the paragraph's direction if it encloses
	// text of that direction, else the other one if it encloses that and
	// follows it, so "(...)" around a Hebrew word is mirrored as a pair
	// rather than half.
	for _, p := range pairs {
		hasL, hasR := false, false
		for _, c := range cls[p[0]+1 : p[1]] {
			hasL = hasL || c == bL
			hasR = hasR || c == bR || c == bEN || c == bAN
		}
		other, hasPara, hasOther := bR, hasL, hasR
		if para == bR {
			other, hasPara, hasOther = bL, hasR, hasL
		}
		dir := bN
		switch {
		case hasPara:
			dir = para
		case hasOther:
			dir = para
			before := para
			for k := p[0] - 1; k >= 0; k-- {
				if c := cls[k]; c != bN {
					before = bR
					if c == bL {
						before = bL
					}
					break
				}
			}
			if before == other {
				dir = other
			}
		}
		if dir != bN {
			cls[p[0]], cls[p[1]] = dir, dir
		}
	}
	// N1/N2: neutrals between two runs of one direction take it (numbers
	// count as right to left), others the paragraph's; the line's ends
	// count as the paragraph's direction.
	for i := 0; i < n; i++ {
		if cls[i] != bN {
			continue
		}
		j := i
		for j < n && cls[j] == bN {
			j++
		}
		before, after := para, para
		if i > 0 {
			before = bL
			if cls[i-1] != bL {
				before = bR
			}
		}
		if j < n {
			after = bL
			if cls[j] != bL {
				after = bR
			}
		}
		dir := para
		if before == after {
			dir = before
		}
		for k := i; k < j; k++ {
			cls[k] = dir
		}
		i = j - 1
	}
	// I1 and I2.
	lv := make([]uint8, n)
	for i, c := range cls {
		switch {
		case c == bR:
			lv[i] = 1
		case c == bEN || c == bAN || para == bR:
			lv[i] = 2
		}
	}
	return lv
}

// visual returns the atoms of a line in display order with their x
// offsets, or nil when the line is left to right, holds no right-to-left
// text, and its order is already the display order.
func (e *engine) visual(atoms []atom) ([]atom, []float64) {
	rtl, para := e.rtl, bL
	if rtl {
		para = bR
	}
	for i := 0; i < len(atoms) && !rtl; i++ {
		if atoms[i].kind == aText && hasRTL(atoms[i].text) {
			rtl = true
			break
		}
	}
	if !rtl {
		return nil, nil
	}

	var chars []bidiChar
	var cls []bidiClass
	for i := range atoms {
		a := &atoms[i]
		if a.kind != aText && a.kind != aSpace {
			chars = append(chars, bidiChar{i, 0, 0})
			c := bN
			if a.kind == aMath && e.maths[a.img].piece {
				// The pieces of a broken formula read left to right
				// as the formula does, whatever surrounds them.
				c = bL
			}
			cls = append(cls, c)
			continue
		}
		for j, r := range a.text {
			c := classOf(r)
			if isMark(r) {
				// W1: a mark takes its base's class; at the line's start
				// there is none, and it is neutral.
				c = bN
				if k := len(cls) - 1; k >= 0 && chars[k].atom == i {
					c = cls[k]
				}
			}
			chars = append(chars, bidiChar{i, j, j + len(string(r))})
			cls = append(cls, c)
		}
	}
	lv := levels(cls, bracketPairs(atoms, chars), para)

	// Pieces: an atom's characters of one level.
	type piece struct {
		a     atom
		level uint8
	}
	var ps []piece
	for k := 0; k < len(chars); {
		c := chars[k]
		j := k + 1
		for j < len(chars) && chars[j].atom == c.atom && lv[j] == lv[k] {
			j++
		}
		a := atoms[c.atom]
		if a.kind == aText {
			end := chars[j-1].end
			if c.start != 0 || end != len(a.text) {
				a.text = a.text[c.start:end]
				a.w = e.width(a.text, a.face, a.st.size)
			}
			if lv[k]%2 == 1 {
				a.text, a.reversed = reverseRTL(a.text), true
			}
		}
		ps = append(ps, piece{a, lv[k]})
		k = j
	}

	// L2: from the highest level down to 1, reverse every run of pieces at
	// that level or above.
	for level := uint8(2); level >= 1; level-- {
		for i := 0; i < len(ps); {
			if ps[i].level < level {
				i++
				continue
			}
			j := i
			for j < len(ps) && ps[j].level >= level {
				j++
			}
			for l, r := i, j-1; l < r; l, r = l+1, r-1 {
				ps[l], ps[r] = ps[r], ps[l]
			}
			i = j
		}
	}

	out := make([]atom, len(ps))
	xs := make([]float64, len(ps))
	x := 0.0
	for i, p := range ps {
		out[i], xs[i] = p.a, x
		x += p.a.w
	}
	return out, xs
}

// visualText is s in display order, its Arabic joined, as a line of
// left-to-right text would show it: a formula's token is drawn as one
// run, left to right, so \text{שלום} drew its letters in the order
// typed, reversed, and Arabic's unjoined.
func (e *engine) visualText(s string) string {
	atoms := e.shape(e.textAtoms(nil, s, e.baseStyle()))
	rtl := e.rtl
	e.rtl = false // a formula runs left to right in any paragraph
	vis, _ := e.visual(atoms)
	e.rtl = rtl
	var b strings.Builder
	for _, a := range vis {
		b.WriteString(a.text)
	}
	return b.String()
}

// bidiChar is one character of a line: its atom and its bytes in the
// atom's text. An image or anchor is one neutral character of no bytes.
type bidiChar struct {
	atom, start, end int
}

// bracketPairs finds the pairs of round, square and curly brackets of a
// line (rule BD16), in the order of their opening brackets. A closing
// bracket closes the nearest open one of its kind, dropping those opened
// after it; one that matches none is left alone.
func bracketPairs(atoms []atom, chars []bidiChar) [][2]int {
	var pairs [][2]int
	type open struct {
		at    int
		close byte
	}
	var stack []open
	for i, c := range chars {
		a := &atoms[c.atom]
		if a.kind != aText || c.end-c.start != 1 {
			continue
		}
		switch ch := a.text[c.start]; ch {
		case '(':
			stack = append(stack, open{i, ')'})
		case '[':
			stack = append(stack, open{i, ']'})
		case '{':
			stack = append(stack, open{i, '}'})
		case ')', ']', '}':
			for k := len(stack) - 1; k >= 0; k-- {
				if stack[k].close == ch {
					pairs = append(pairs, [2]int{stack[k].at, i})
					stack = stack[:k]
					break
				}
			}
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0] < pairs[j][0] })
	return pairs
}

// mirrored are the paired characters shown mirrored in right-to-left
// text (the common part of Unicode's Bidi_Mirroring_Glyph).
var mirrored = map[rune]rune{
	'(': ')', ')': '(', '[': ']', ']': '[', '{': '}', '}': '{', '<': '>', '>': '<',
	'«': '»', '»': '«', '‹': '›', '›': '‹',
}

// reverseRTL reverses s for display, mirroring brackets. Each mark goes
// before the letter it sits on: DejaVu draws its Hebrew and Arabic marks
// with no advance, over the glyph drawn after them, as a shaper's
// right-to-left output places them; after the letter they landed on its
// left-hand neighbour.
func reverseRTL(s string) string {
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for end := len(rs); end > 0; {
		start := end - 1
		for start > 0 && isMark(rs[start]) {
			start--
		}
		for _, r := range rs[start+1 : end] {
			b.WriteRune(r)
		}
		r := rs[start]
		if m, ok := mirrored[r]; ok {
			r = m
		}
		b.WriteRune(r)
		end = start
	}
	return b.String()
}
