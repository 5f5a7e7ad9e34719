package markdown

import (
	"bytes"
)

// An alphabet command inside another (\boldsymbol{\mathcal{A}},
// \mathbf{x\mathcal{A}}, \mathcal{\mathbf{A}}) is one the converter cannot
// combine: it notes "Unknown variant transform" and writes a plain A, on
// both backends, where MathJax draws the inner alphabet, made bold by
// \boldsymbol or \bm (a bold script A). nestedAlphabets drops an outer
// command that holds an inner one alone (but for \boldsymbol and \bm),
// and writes any other inner command of letters and digits as Unicode's
// letters of its alphabet (𝒜, 𝓐 when made bold), which the outer command
// leaves as they are.

// alphabets are the commands that set the letters' alphabet.
var alphabets = map[string]bool{
	"mathbf": true, "mathit": true, "mathrm": true, "mathsf": true, "mathtt": true, "mathnormal": true,
	"mathcal": true, "mathscr": true, "mathfrak": true, "mathbb": true,
	"boldsymbol": true, "bm": true, "pmb": true,
}

// emboldening are the commands that make the alphabet inside them bold.
var emboldening = map[string]bool{"boldsymbol": true, "bm": true, "pmb": true}

// alphabet is where an alphabet's capital A, small a and digit 0 are in
// Unicode (0 for none: such characters stay ASCII), and the letters the
// Basic Multilingual Plane holds in its holes.
type alphabet struct {
	upper, lower, digit rune
	holes               map[byte]rune
}

var (
	script = alphabet{0x1D49C, 0x1D4B6, 0, map[byte]rune{'B': 'ℬ', 'E': 'ℰ', 'F': 'ℱ', 'H': 'ℋ', 'I': 'ℐ', 'L': 'ℒ',
		'M': 'ℳ', 'R': 'ℛ', 'e': 'ℯ', 'g': 'ℊ', 'o': 'ℴ'}}
	fraktur      = alphabet{0x1D504, 0x1D51E, 0, map[byte]rune{'C': 'ℭ', 'H': 'ℌ', 'I': 'ℑ', 'R': 'ℜ', 'Z': 'ℨ'}}
	doubleStruck = alphabet{0x1D538, 0x1D552, 0x1D7D8, map[byte]rune{'C': 'ℂ', 'H': 'ℍ', 'N': 'ℕ', 'P': 'ℙ',
		'Q': 'ℚ', 'R': 'ℝ', 'Z': 'ℤ'}}
	boldUpright = alphabet{0x1D400, 0x1D41A, 0x1D7CE, nil}
	italic      = alphabet{0x1D434, 0x1D44E, 0, map[byte]rune{'h': 'ℎ'}}
	boldItalic  = alphabet{0x1D468, 0x1D482, 0x1D7CE, nil}
	sans        = alphabet{0x1D5A0, 0x1D5BA, 0x1D7E2, nil}
	sansBold    = alphabet{0x1D5D4, 0x1D5EE, 0x1D7EC, nil}
	mono        = alphabet{0x1D670, 0x1D68A, 0x1D7F6, nil}
)

// alphabetOf is the alphabet of command name, made bold when bold: false
// for \mathrm and \mathnormal, whose letters are ASCII's.
func alphabetOf(name string, bold bool) (alphabet, bool) {
	switch name {
	case "mathcal", "mathscr":
		if bold {
			return alphabet{0x1D4D0, 0x1D4EA, 0x1D7CE, nil}, true
		}
		return script, true
	case "mathfrak":
		if bold {
			return alphabet{0x1D56C, 0x1D586, 0x1D7CE, nil}, true
		}
		return fraktur, true
	case "mathbb":
		return doubleStruck, true // no bold double-struck, in Unicode or MathJax
	case "mathbf":
		return boldUpright, true
	case "mathit":
		if bold {
			return boldItalic, true
		}
		return italic, true
	case "boldsymbol", "bm", "pmb":
		return boldItalic, true
	case "mathsf":
		if bold {
			return sansBold, true
		}
		return sans, true
	case "mathtt":
		return mono, true
	}
	return alphabet{}, false
}

// letters writes b, ASCII letters, digits and spaces, in alphabet a, or
// reports false for anything else.
func (a alphabet) letters(b []byte) ([]byte, bool) {
	var out []byte
	for _, c := range b {
		r := rune(c)
		switch {
		case a.holes[c] != 0:
			r = a.holes[c]
		case c >= 'A' && c <= 'Z':
			r = a.upper + rune(c-'A')
		case c >= 'a' && c <= 'z':
			r = a.lower + rune(c-'a')
		case c >= '0' && c <= '9':
			if a.digit != 0 {
				r = a.digit + rune(c-'0')
			}
		case c == ' ':
		default:
			return nil, false
		}
		out = append(out, string(r)...)
	}
	return out, len(bytes.TrimSpace(b)) > 0
}

// maxAlphabetNesting bounds the inner commands rewritten in a formula,
// each a pass over it.
const maxAlphabetNesting = 16

// nestedAlphabets returns tex with each alphabet command inside another
// written as described above, and whether it changed anything.
func nestedAlphabets(tex []byte) ([]byte, bool) {
	// Most formulas have no two alphabet commands: not read again.
	if n := bytes.Count(tex, []byte(`\math`)) + bytes.Count(tex, []byte(`\b`)) + bytes.Count(tex, []byte(`\pmb`)); n < 2 {
		return tex, false
	}
	changed := false
	for range maxAlphabetNesting {
		out, ok := unnestOnce(tex)
		if !ok {
			break
		}
		tex, changed = out, true
	}
	return tex, changed
}

// command is an alphabet command in tex: its name, where it starts, and
// its argument group's braces.
type command struct {
	name         string
	at, open, cl int
}

// alphabetAt reads the alphabet command at tex[i] (a backslash) with a
// group for its argument; end is where reading goes on.
func alphabetAt(tex []byte, i int, match []int) (cmd command, end int, ok bool) {
	name, end := controlWord(tex, i)
	if name == "" {
		return command{}, min(i+2, len(tex)), false // a control symbol, whole
	}
	if !alphabets[name] {
		return command{}, end, false
	}
	o := skipSpace(tex, end)
	if o >= len(tex) || tex[o] != '{' || match[o] < 0 {
		return command{}, end, false
	}
	return command{name, i, o, match[o]}, end, true
}

// unnestOnce rewrites the first alphabet command inside another in tex.
func unnestOnce(tex []byte) ([]byte, bool) {
	match := matchGroups(tex)
	var outers []command // the alphabet commands whose group holds i
	for i := 0; i < len(tex); {
		for len(outers) > 0 && i > outers[len(outers)-1].cl {
			outers = outers[:len(outers)-1]
		}
		if tex[i] != '\\' {
			i++
			continue
		}
		cmd, end, ok := alphabetAt(tex, i, match)
		if !ok {
			i = end
			continue
		}
		if len(outers) == 0 {
			outers = append(outers, cmd)
			i = end
			continue
		}
		outer := outers[len(outers)-1]
		bold := false
		for _, o := range outers {
			bold = bold || emboldening[o.name]
		}
		alone := skipSpace(tex, outer.open+1) == cmd.at && skipSpace(tex, cmd.cl+1) == outer.cl
		if alone && !emboldening[outer.name] {
			// The outer command holds the inner alone: the inner decides.
			return splice(tex, outer.at, outer.cl+1, tex[cmd.at:cmd.cl+1]), true
		}
		body := tex[cmd.open+1 : cmd.cl]
		if a, ok := alphabetOf(cmd.name, bold); ok {
			if l, ok := a.letters(body); ok {
				// A group, so that scripts after it take all of it, as
				// they took the command's.
				return splice(tex, cmd.at, cmd.cl+1, append(append([]byte{'{'}, l...), '}')), true
			}
		}
		outers = append(outers, cmd)
		i = end
	}
	return nil, false
}

// splice returns tex with tex[from:to] replaced by s.
func splice(tex []byte, from, to int, s []byte) []byte {
	out := make([]byte, 0, len(tex)-(to-from)+len(s))
	out = append(out, tex[:from]...)
	out = append(out, s...)
	return append(out, tex[to:]...)
}
