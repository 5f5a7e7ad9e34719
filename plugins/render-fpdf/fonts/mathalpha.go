package fonts

import (
	"fmt"
	"strings"
)

// MathAlpha is the face of the mathematical alphabets no DejaVu text face
// draws: script (\mathcal, \mathscr), bold script, fraktur (\mathfrak),
// bold fraktur and double-struck (\mathbb), capitals, small letters and
// the double-struck digits, with the letterlike characters of the Basic
// Multilingual Plane that fill those alphabets' holes (ℒ, ℭ, ℝ, ...).
// Its glyphs are DejaVu Math TeX Gyre's, the font Chromium draws math
// with, so both backends draw the same letters. The file is a subset of
// that font made by TestMathAlphaFile: the Set's faces keep the BMP only,
// so the alphabets, which Unicode puts at U+1D49C-U+1D7E1, are mapped in
// it from U+E000 up (MathAlphaRune), a rune a reader never sees, since a
// laid-out formula's text is its TeX (ActualText).
const MathAlpha ID = Count + 2*MaxFallbacks

const mathAlphaFile = "DejaVuMathTeXGyre-Alphabets.ttf"

// The Mathematical Alphanumeric Symbols block and where the MathAlpha
// face maps it.
const (
	mathAlnumFirst, mathAlnumLast = 0x1D400, 0x1D7FF
	mathAlnumPUA                  = 0xE000
)

// MathAlphaRune returns the rune that draws r in the MathAlpha face, and
// false when that face lacks r: r is one of the alphabets above or one of
// their letterlike characters.
func (s *Set) MathAlphaRune(r rune) (rune, bool) {
	if r >= mathAlnumFirst && r <= mathAlnumLast {
		r = r - mathAlnumFirst + mathAlnumPUA
	} else if r >= mathAlnumPUA && r <= mathAlnumPUA+mathAlnumLast-mathAlnumFirst {
		return 0, false // the face's own stand-ins are not characters of a formula
	}
	f := s.faces[MathAlpha]
	return r, f != nil && f.Has(r)
}

func (s *Set) loadMathAlpha() error {
	data, err := files.ReadFile(mathAlphaFile)
	if err != nil {
		return fmt.Errorf("read %s: %w", mathAlphaFile, err)
	}
	f, err := Parse(strings.TrimSuffix(mathAlphaFile, ".ttf"), data)
	if err != nil {
		return fmt.Errorf("parse %s: %w", mathAlphaFile, err)
	}
	s.faces[MathAlpha] = f
	if s.descs[MathAlpha], err = describe(f); err != nil {
		return fmt.Errorf("describe %s: %w", mathAlphaFile, err)
	}
	return nil
}
