package layout

import (
	"math"
	"strings"

	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
)

// line is a laid-out line of inline content.
type line struct {
	atoms []atom
	xs    []float64 // x offset of each atom from the line's start
	w     float64   // width without trailing spaces
	asc   float64   // above the baseline
	desc  float64   // below the baseline
	h     float64
}

// baseline returns the baseline's offset from the line's top.
func (l *line) baseline() float64 { return (l.h-l.asc-l.desc)/2 + l.asc }

type align uint8

const (
	// alignStart is the left, or the right in right-to-left text.
	alignStart align = iota
	alignLeft
	alignCenter
	alignRight
)

// breakLines fills lines of the given width greedily. A run too wide for a
// line of its own is broken between characters, so nothing is ever cut off.
// strut is the style whose size gives empty lines, and every line, their
// minimum height.
func (e *engine) breakLines(atoms []atom, width float64, strut *style) []line {
	width = math.Max(width, 1)
	atoms = e.fitMath(atoms, width)
	var lines []line
	cur := line{}
	x := 0.0
	finish := func() {
		if e.lines++; e.lines > e.maxLines {
			panic(abort{ErrTooManyLines})
		}
		e.tick()
		e.measure(&cur, strut)
		lines = append(lines, cur)
		cur = line{}
		x = 0
	}
	put := func(a atom) {
		if a.kind == aHyphen {
			return
		}
		cur.atoms = append(cur.atoms, a)
		cur.xs = append(cur.xs, x)
		x += a.w
		if a.kind != aSpace {
			cur.w = x
		}
	}
	for i := 0; i < len(atoms); {
		a := atoms[i]
		switch a.kind {
		case aBreak:
			finish()
			i++
			continue
		case aSpace:
			if len(cur.atoms) > 0 {
				put(a)
			}
			i++
			continue
		}
		// A word: the atoms up to the next space or break.
		j, ww := i, 0.0
		for j < len(atoms) && atoms[j].kind != aSpace && atoms[j].kind != aBreak {
			ww += atoms[j].w
			j++
			if atoms[j-1].wrap {
				break
			}
		}
		if x+ww > width {
			// A soft hyphen that leaves room for its "-" ends the line
			// there, before the word is moved or cut between characters.
			if k := e.softBreak(atoms[i:j], width-x); k > 0 {
				for _, a := range atoms[i : i+k] {
					put(a)
				}
				h := atoms[i+k]
				e.atom()
				put(atom{kind: aText, face: h.face, text: "-", w: e.width("-", h.face, h.st.size), st: h.st})
				finish()
				i += k + 1
				continue
			}
		}
		if x+ww > width && cur.w > 0 {
			// Trailing spaces stay on the line they end; they are not drawn.
			finish()
			continue
		}
		if x+ww <= width {
			for ; i < j; i++ {
				put(atoms[i])
			}
			continue
		}
		// Wider than a whole line: break between characters.
		for ; i < j; i++ {
			for _, piece := range e.splitAtom(atoms[i], width-x, width) {
				if x+piece.w > width && cur.w > 0 {
					finish()
				}
				put(piece)
			}
		}
	}
	if len(cur.atoms) > 0 || len(lines) == 0 {
		finish()
	}
	return lines
}

// softBreak returns the index in word of the last soft hyphen after which
// the word's start and a "-" fit in room, or -1.
func (e *engine) softBreak(word []atom, room float64) int {
	at, w := -1, 0.0
	for k, a := range word {
		if a.kind == aHyphen && w > 0 && w+e.width("-", a.face, a.st.size) <= room {
			at = k
		}
		w += a.w
	}
	return at
}

// splitAtom cuts a text atom into pieces: the first fits in first, the
// others in width. Every piece holds at least one character.
func (e *engine) splitAtom(a atom, first, width float64) []atom {
	if a.kind != aText || a.w <= first {
		return []atom{a}
	}
	f := e.fonts.Face(a.face)
	var out []atom
	room := first
	start, w := 0, 0.0
	for i, r := range a.text {
		rw := float64(f.Width(r)) * a.st.size / 1000
		if w+rw > room && i > start {
			e.atom()
			out = append(out, atom{kind: aText, face: a.face, text: a.text[start:i], w: w, st: a.st})
			start, w, room = i, 0, width
		} else if w+rw > room && len(out) == 0 && room < width {
			// Not even one character fits after what the line holds: start
			// the run on the next line.
			room = width
		}
		w += rw
	}
	out = append(out, atom{kind: aText, face: a.face, text: a.text[start:], w: w, st: a.st, wrap: a.wrap})
	return out
}

// measure sets a line's ascent, descent and height from its atoms.
func (e *engine) measure(l *line, strut *style) {
	sf := e.fonts.Face(strut.face())
	l.asc, l.desc = sf.Ascent*strut.size, sf.Descent*strut.size
	lh := strut.size * e.th.lineHeight
	for _, a := range l.atoms {
		switch a.kind {
		case aText, aSpace:
			f := e.fonts.Face(a.face)
			l.asc = math.Max(l.asc, f.Ascent*a.st.size+a.st.rise)
			l.desc = math.Max(l.desc, f.Descent*a.st.size-a.st.rise)
			lh = math.Max(lh, a.st.size*e.th.lineHeight)
		case aImage, aBlockImage:
			l.asc = math.Max(l.asc, a.imgH)
		case aEmoji:
			asc, desc := e.emojiExtent(&a)
			l.asc, l.desc = math.Max(l.asc, asc), math.Max(l.desc, desc)
			lh = math.Max(lh, a.st.size*e.th.lineHeight)
		case aMath, aBlockMath:
			asc, desc := e.mathExtent(&a)
			// A little air above and below, as Chromium's line box
			// around a tall formula has.
			pad := a.st.size * 0.1
			l.asc, l.desc = math.Max(l.asc, asc+pad), math.Max(l.desc, desc+pad)
			lh = math.Max(lh, a.st.size*e.th.lineHeight)
		}
	}
	l.h = math.Max(lh, l.asc+l.desc)
}

// emitLine draws a line whose top is at y, within [x0, x0+width].
func (e *engine) emitLine(l *line, x0, y, width float64, al align) {
	switch e.lineAlign(al) {
	case alignCenter:
		x0 += math.Max(0, (width-l.w)/2)
	case alignRight:
		x0 += math.Max(0, width-l.w)
	}
	base := y + l.baseline()
	e.drawMarkers(base)
	n := len(l.atoms)
	for n > 0 && l.atoms[n-1].kind == aSpace {
		n--
	}
	atoms, xs := l.atoms[:n], l.xs[:n]
	// Only a line with right-to-left text can hold text that stands for
	// other characters: shaped Arabic, mirrored brackets.
	rtl := false
	if va, vx := e.visual(atoms); va != nil {
		atoms, xs, rtl = va, vx, true
	}

	// Shading for inline code goes first so text draws over it.
	for i := 0; i < len(atoms); {
		if !atoms[i].st.code || atoms[i].kind == aSpace {
			i++
			continue
		}
		j := i
		for j+1 < len(atoms) && atoms[j+1].st.code {
			j++
		}
		for j > i && atoms[j].kind == aSpace {
			j--
		}
		st := atoms[i].st
		f := e.fonts.Face(atoms[i].face)
		pad := st.size * 0.2
		e.add(Item{Kind: Fill, X: x0 + xs[i] - pad, Y: base - f.Ascent*st.size - pad*0.5,
			W: xs[j] + atoms[j].w - xs[i] + 2*pad, H: (f.Ascent + f.Descent) * st.size, Color: e.th.codeBg})
		i = j + 1
	}

	// Text: neighbouring atoms that look the same become one run, spaces
	// between them included.
	var b strings.Builder
	for i := 0; i < len(atoms); {
		a := atoms[i]
		switch a.kind {
		case aImage, aBlockImage:
			e.add(Item{Kind: ImageBox, Image: a.img, X: x0 + xs[i], Y: base - a.imgH, W: a.w, H: a.imgH})
			i++
			continue
		case aEmoji:
			e.drawEmoji(&a, x0+xs[i], base)
			i++
			continue
		case aMath, aBlockMath:
			e.drawFormula(&a, x0+xs[i], base)
			i++
			continue
		case aAnchor:
			e.anchor(a.text, y)
			i++
			continue
		}
		b.Reset()
		b.WriteString(a.text)
		j := i + 1
		for j < len(atoms) && sameRun(&atoms[j], &a) {
			b.WriteString(atoms[j].text)
			j++
		}
		if txt := b.String(); strings.TrimSpace(txt) != "" {
			e.text(x0+xs[i], base-a.st.rise, txt, a.face, a.st)
			if rtl {
				e.actual(atoms[i:j])
			}
		}
		i = j
	}

	// Decorations and link areas span runs of atoms sharing them.
	e.spans(atoms, xs, func(a *atom) bool { return a.st.strike }, func(i, j int) {
		st := atoms[i].st
		yy := base - st.rise - st.size*0.3
		e.add(Item{Kind: Line, X: x0 + xs[i], Y: yy, X2: x0 + xs[j] + atoms[j].w, Y2: yy,
			LineWidth: math.Max(0.4, st.size*0.06), Color: st.color})
	})
	e.spans(atoms, xs, func(a *atom) bool { return a.st.underline }, func(i, j int) {
		st := atoms[i].st
		yy := base - st.rise + st.size*0.12
		e.add(Item{Kind: Line, X: x0 + xs[i], Y: yy, X2: x0 + xs[j] + atoms[j].w, Y2: yy,
			LineWidth: math.Max(0.4, st.size*0.05), Color: st.color})
	})
	for i := 0; i < len(atoms); {
		href := atoms[i].st.link
		j := i
		for j+1 < len(atoms) && atoms[j+1].st.link == href {
			j++
		}
		if href != "" && atoms[i].kind != aAnchor {
			e.link(href, x0+xs[i], y, xs[j]+atoms[j].w-xs[i], l.h)
		}
		i = j + 1
	}
}

func sameRun(b, a *atom) bool {
	return (b.kind == aText || b.kind == aSpace) && b.face == a.face && b.st.size == a.st.size &&
		b.st.color == a.st.color && b.st.rise == a.st.rise &&
		// In a fallback face, bold and regular text differ only in what
		// the painter synthesizes (synthetic), so they are two runs.
		(a.face < fonts.Count || b.st.bold == a.st.bold && b.st.italic == a.st.italic)
}

// spans calls draw for each maximal run of atoms that has(), trimmed of
// spaces at both ends.
func (e *engine) spans(atoms []atom, xs []float64, has func(*atom) bool, draw func(i, j int)) {
	for i := 0; i < len(atoms); i++ {
		if atoms[i].kind == aSpace || atoms[i].kind == aAnchor || !has(&atoms[i]) {
			continue
		}
		j := i
		for j+1 < len(atoms) && has(&atoms[j+1]) {
			j++
		}
		k := j
		for k > i && (atoms[k].kind == aSpace || atoms[k].kind == aAnchor) {
			k--
		}
		draw(i, k)
		i = j
	}
}
