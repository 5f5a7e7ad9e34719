package layout

import (
	"strings"
	"unicode"
)

//go:generate go run gen_arabic.go

// Arabic is a joining script: a letter takes an isolated, final, initial
// or medial shape by whether it joins the letters beside it, and lam
// followed by alef is always written as one ligature. fpdf draws each
// character with its font's default glyph, the isolated shape, which
// Arabic readers find hard to read. DejaVu Sans and Sans Mono carry the
// Arabic Presentation Forms (U+FB50-U+FDFF, U+FE70-U+FEFF), the shapes as
// characters of their own, so the letters are mapped to them here, by the
// joining types of Unicode's ArabicShaping.txt (the rules of section 9.2 of
// the standard), before the line is put into display order. A full shaping
// engine (HarfBuzz's port in go-text/typesetting) would give glyph ids,
// which the simple fonts this plugin embeds (one code per character) cannot
// draw. The tables are generated from the Unicode data in ucd/.

// joinType is a character's Unicode Joining_Type.
type joinType uint8

const (
	joinU joinType = iota // non-joining: spaces, digits, hamza, ZWNJ
	joinR                 // right-joining: joins the letter before it (alef, dal, reh, waw)
	joinL                 // left-joining: joins the letter after it
	joinD                 // dual-joining: joins both (beh, lam, meem, ...)
	joinC                 // join-causing: tatweel and ZWJ, which draw the joins of both neighbours
	joinT                 // transparent: marks, which the letters around them join across
)

const (
	zwnj = '\u200C' // breaks the join between its neighbours
	zwj  = '\u200D' // makes its neighbours join
)

// Positions in positionalForms.
const (
	formIsolated = iota
	formFinal
	formInitial
	formMedial
)

func joiningType(r rune) joinType {
	switch {
	case r >= 0x600 && r < 0x600+rune(len(joiningTypes)):
		return joiningTypes[r-0x600]
	case r == zwj:
		return joinC
	case unicode.In(r, unicode.Mn, unicode.Me):
		return joinT
	}
	return joinU
}

// needsShaping reports whether s holds a character of the Arabic blocks
// (U+0600-U+077F, U+0840-U+08FF) or a joiner. It looks at bytes, not
// characters, so that text without them costs a comparison a byte.
func needsShaping(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b < 0xD8 {
			continue
		}
		switch {
		case b <= 0xDD:
			return true
		case b == 0xE0 && i+1 < len(s) && s[i+1] >= 0xA1 && s[i+1] <= 0xA3:
			return true
		case b == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0x8C || s[i+2] == 0x8D):
			return true
		}
	}
	return false
}

// shape gives the Arabic letters of atoms in logical order their
// positional forms and lam-alef ligatures, joining across atoms of one
// word (a style change inside a word keeps its letters joined), and
// removes the joiners. Atoms left empty are dropped.
func (e *engine) shape(atoms []atom) []atom {
	changed := false
	for i := 0; i < len(atoms); {
		j, need := i, false
		for j < len(atoms) && inWord(atoms[j].kind) {
			need = need || (atoms[j].kind == aText && needsShaping(atoms[j].text))
			j++
		}
		if need {
			e.shapeWord(atoms[i:j])
			changed = true
		}
		i = max(j, i+1)
	}
	if !changed {
		return atoms
	}
	out := atoms[:0]
	for _, a := range atoms {
		if a.kind != aText || a.text != "" {
			out = append(out, a)
		}
	}
	return out
}

// inWord reports atoms that neither break a word nor separate its letters.
func inWord(k atomKind) bool { return k == aText || k == aHyphen || k == aAnchor }

// shapedRune is a character of a word being shaped.
type shapedRune struct {
	r    rune
	atom int
	t    joinType
}

// shapeWord shapes the letters of one word's atoms in place.
func (e *engine) shapeWord(word []atom) {
	var rs []shapedRune
	for k := range word {
		if word[k].kind != aText {
			continue
		}
		face := e.fonts.Face(word[k].face)
		for _, r := range word[k].text {
			t := joiningType(r)
			if t == joinR || t == joinL || t == joinD {
				// A letter the face has no shapes for is drawn isolated,
				// so its neighbours must not reach for it.
				if f, ok := positionalForms[r]; !ok || !face.Has(f[formIsolated]) {
					t = joinU
				}
			}
			rs = append(rs, shapedRune{r, k, t})
		}
	}

	// joinsPrev[i]: the character joins the one before it in logical
	// order (to its right on the page); joinsNext: the one after it.
	joinsPrev := make([]bool, len(rs))
	joinsNext := make([]bool, len(rs))
	prev := -1
	for i, c := range rs {
		if c.t == joinT {
			continue
		}
		if prev >= 0 {
			p := rs[prev].t
			if (p == joinL || p == joinD || p == joinC) && (c.t == joinR || c.t == joinD || c.t == joinC) {
				joinsNext[prev], joinsPrev[i] = true, true
			}
		}
		prev = i
	}

	var bs = make([]strings.Builder, len(word))
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		b := &bs[c.atom]
		if c.r == zwj || c.r == zwnj {
			continue
		}
		face := e.fonts.Face(word[c.atom].face)
		if c.r == 0x644 {
			if n, lig, ok := lamAlef(rs, i, joinsPrev[i]); ok && face.Has(lig) {
				// Marks on the lam go on the ligature, after it.
				b.WriteRune(lig)
				for _, m := range rs[i+1 : n] {
					b.WriteRune(m.r)
				}
				i = n
				continue
			}
		}
		r := c.r
		if f, ok := positionalForms[r]; ok && c.t != joinU {
			form := formIsolated
			switch {
			case joinsPrev[i] && joinsNext[i]:
				form = formMedial
			case joinsPrev[i]:
				form = formFinal
			case joinsNext[i]:
				form = formInitial
			}
			if f[form] != 0 && face.Has(f[form]) {
				r = f[form]
			}
		}
		b.WriteRune(r)
	}
	for k := range word {
		if word[k].kind == aText {
			word[k].text = bs[k].String()
			word[k].w = e.width(word[k].text, word[k].face, word[k].st.size)
		}
	}
}

// lamAlef looks for an alef after the lam at rs[i], across marks and in
// the lam's atom, and returns the alef's index and the ligature, final
// when the lam joins the letter before it.
func lamAlef(rs []shapedRune, i int, final bool) (int, rune, bool) {
	n := i + 1
	for n < len(rs) && rs[n].t == joinT && rs[n].atom == rs[i].atom {
		n++
	}
	if n == len(rs) || rs[n].atom != rs[i].atom {
		return 0, 0, false
	}
	f, ok := lamAlefForms[rs[n].r]
	if !ok {
		return 0, 0, false
	}
	if final {
		return n, f[1], true
	}
	return n, f[0], true
}
