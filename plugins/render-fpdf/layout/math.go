package layout

import (
	"math"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Math is laid out from the MathML the parser puts on math nodes
// (stage.Node's mathml; see mathml.go for the subset, mathbox.go for the
// boxes). A laid-out formula is one atom: inline, it sits on the line's
// baseline and the line grows to hold it; display math ($$...$$, ```math)
// is centred on lines of its own. Either is scaled down to fit its column,
// and a display formula also to fit the page. What a reader extracts or
// copies is its TeX source: the painter wraps the formula's drawing in a
// span whose ActualText is the TeX (MathBegin, MathEnd).

// MaxMathItems bounds the drawing items a document's laid-out formulas
// draw, a share of MaxItems. A formula draws an item per token and per
// stroke where its source drew one or two, so the parser's 256 KiB of TeX
// (x+x+...) could draw 260,000 and fail a document that rendered when
// formulas were printed as source; past the bound they still are.
const MaxMathItems = 100_000

// mathRef is a laid-out formula an atom refers to (atom.img).
type mathRef struct {
	box *mbox
	tex string
	// row is the inline formula's outermost row and cuts the indices
	// of its elements a line may break before (mathbreak.go); piece marks
	// a part of a broken formula.
	row   *mbox
	cuts  []int
	piece bool
	// tag is a display formula's \tag as printed, "(1)" (the parser's
	// mathtag), drawn at the right margin.
	tag string
	// rows are the tags of a display formula's rows (its table's
	// <mlabeledtr> labels), each drawn at the right margin on its row's
	// baseline, y from the formula's.
	rows []mlabel
}

// formula lays out the MathML of math node n in style st, or reports
// false when n is to be printed as its source: no MathML (the parser did
// not convert it) or MathML outside the subset.
func (e *engine) formula(n *stage.Node, st *style) (atom, bool) {
	return e.formulaIn(n, st, 0)
}

// formulaIn is formula for a display formula on lines of its own, in a
// column width wide, which a multline spans; 0 is no such column.
func (e *engine) formulaIn(n *stage.Node, st *style, width float64) (atom, bool) {
	mml := n.Attr("mathml")
	if mml == "" || n.Attr("math") == "" {
		return atom{}, false
	}
	root, err := parseMathML(mml)
	if err != nil {
		e.log.Debug("formula printed as source", "err", err)
		return atom{}, false
	}
	display := root.attr("display") == "block"
	var tag string
	labels := rowLabels(root, nil)
	if display {
		tag = n.Attr("mathtag")
		for _, t := range append(labels, tag) {
			for _, r := range t {
				if !e.fonts.Face(st.face()).Has(r) {
					// A tag is drawn in the text's face alone, which
					// lacks this character: the formula prints as
					// source, whole, before it is laid out and charged
					// to the bounds.
					return atom{}, false
				}
			}
		}
	} else if len(labels) > 0 {
		return atom{}, false // no margin to draw them at
	}
	if tagW := 0.0; width > 0 && len(labels) > 0 {
		// A multline spans the room its tags leave.
		for _, t := range labels {
			tagW = math.Max(tagW, e.width(t, st.face(), st.size))
		}
		width = math.Max(0, width-tagW-st.size)
	}
	c := mctx{size: st.size, base: st.size, display: display, width: width}
	b, err := e.newMathLayout().lay(root, c)
	if err != nil {
		e.log.Debug("formula printed as source", "err", err)
		return atom{}, false
	}
	var row *mbox
	var cuts []int
	if !display {
		row, cuts = mathBreaks(root, b)
	}
	rows := b.rowTags(0, nil)
	if len(rows) != len(labels) {
		return atom{}, false // a label in a table not laid out as one
	}
	items := b.items() + 2 + 2*len(cuts) + len(rows) // and MathBegin, MathEnd per piece
	if e.mathItems+items > e.maxMathItems {
		if !e.mathCapped {
			e.mathCapped = true
			e.log.Info("formulas past the document's drawing-item bound printed as source", "bound", e.maxMathItems)
		}
		return atom{}, false
	}
	e.mathItems += items
	e.atom()
	kind := aMath
	if display {
		kind = aBlockMath
	}
	ref := mathRef{box: b, tex: n.Text, row: row, cuts: cuts, tag: tag, rows: rows}
	e.maths = append(e.maths, ref)
	w := b.w
	if tw := e.tagWidth(ref, st); tw > 0 {
		// Where the formula is not on lines of its own (a table's cell),
		// its tags follow it an em on, as on Chromium: the atom holds all.
		w += st.size + tw
	}
	return atom{kind: kind, img: len(e.maths) - 1, w: w, imgH: 1, text: n.Text, st: st}, true
}

// displayMath lays out a display math block, or reports false to print
// it as a code block.
func (e *engine) displayMath(n *stage.Node) bool {
	a, ok := e.formulaIn(n, e.baseStyle(), e.x1-e.x0)
	if !ok {
		return false
	}
	e.blockMath(a)
	e.addGap(e.paraGap())
	return true
}

// blockMath places a display formula centred on lines of its own, scaled
// down to the column's width and the page's height when it is larger. Its
// tag ends at the right margin, on its baseline, as MathJax puts it; a
// formula that would reach the tag moves left, then shrinks, to keep an
// em from it, unless that leaves it less than half the column: the tag
// then goes under it, flush right, as LaTeX puts a tag it has no room
// for. Drawn beside it at any cost, a long tag on a narrow page (A6, a
// list's item) was drawn over the formula.
func (e *engine) blockMath(a atom) {
	ref := e.maths[a.img]
	fit := e.fitDisplay(a)
	f := fit.f
	// One placement for both, so that the tag is on the formula's page.
	top := e.place(fit.height())
	base := top + fit.pad + fit.asc
	e.drawMarkers(base)
	col := e.x1 - e.x0
	x := e.x0 + math.Max(0, (col-ref.box.w*f)/2)
	x = math.Max(e.x0, math.Min(x, fit.right-ref.box.w*f))
	a.imgH = f
	face := e.fonts.Face(a.st.face())
	switch {
	case len(ref.rows) > 0:
		tags := make([]placedTag, len(ref.rows))
		for i, r := range ref.rows {
			tags[i] = placedTag{e.x1 - e.width(r.text, a.st.face(), a.st.size*fit.tagF), base + r.y*f, r.text}
		}
		e.drawTagged(&a, x, base, tags, fit.tagF)
	case ref.tag == "":
		e.drawFormula(&a, x, base)
	case fit.below:
		e.drawTagged(&a, x, base, []placedTag{{e.x1 - fit.tagW, top + fit.asc + fit.desc + 2*fit.pad + face.Ascent*a.st.size*fit.tagF, ref.tag}}, fit.tagF)
	default:
		e.drawTagged(&a, x, base, []placedTag{{e.x1 - fit.tagW, base, ref.tag}}, fit.tagF)
	}
	if a.st.link != "" {
		e.link(a.st.link, x, top, ref.box.w*f, e.y-top)
	}
}

// displayFit is how blockMath fits a display formula to the column and
// the page: its scale f, where it must end, its tag's width and scale,
// whether the tag goes under it, and the room they take.
type displayFit struct {
	f, right, tagW, tagF float64
	below                bool
	asc, desc, pad       float64
	tagLine              float64 // the tag's line under the formula, when below
}

// height is the room the formula and its tag take on the page.
func (d displayFit) height() float64 { return d.asc + d.desc + 2*d.pad + d.tagLine }

func (e *engine) fitDisplay(a atom) displayFit {
	ref := e.maths[a.img]
	b := ref.box
	f := a.imgH
	if h := (e.bottom - e.top) * 0.9; (b.asc+b.desc)*f > h {
		f = h / (b.asc + b.desc)
	}
	col := e.x1 - e.x0
	d := displayFit{right: e.x1, tagF: 1}
	if tw := e.tagWidth(ref, a.st); tw > 0 {
		d.tagW = tw
		if d.tagW > col {
			// Not past the left margin either.
			d.tagF, d.tagW = col/d.tagW, col
		}
		room := e.x1 - d.tagW - a.st.size
		// Rows' tags stay beside their rows, the formula shrinking.
		if b.w*f <= room-e.x0 || room-e.x0 >= col/2 || len(ref.rows) > 0 {
			d.right = room
		} else {
			d.below = true
		}
	}
	if w := d.right - e.x0; b.w*f > w {
		f = w / b.w
	}
	d.f = f
	// At least a line of text high, so that the text a reader extracts
	// for it (see drawFormula) stays in the formula's room.
	face := e.fonts.Face(a.st.face())
	d.asc = math.Max(b.asc, face.Ascent*a.st.size) * f
	d.desc = math.Max(b.desc, face.Descent*a.st.size) * f
	d.pad = a.st.size * 0.35
	if d.below {
		d.tagLine = (face.Ascent + face.Descent) * a.st.size * d.tagF
	}
	return d
}

// placedTag is a tag's text and where its baseline starts.
type placedTag struct {
	x, y float64
	text string
}

// tagWidth is the width of a formula's widest tag in style st, 0 when it
// has none.
func (e *engine) tagWidth(ref mathRef, st *style) float64 {
	w := 0.0
	if ref.tag != "" {
		w = e.width(ref.tag, st.face(), st.size)
	}
	for _, r := range ref.rows {
		w = math.Max(w, e.width(r.text, st.face(), st.size))
	}
	return w
}

// drawTagged draws a display formula on baseline base and its tags,
// scaled by tagF, all inside the span whose text is the formula's TeX:
// the TeX holds the \tag, and a reader copies it once, not the tag's
// text after it.
func (e *engine) drawTagged(a *atom, x, base float64, tags []placedTag, tagF float64) {
	ref := e.maths[a.img]
	f := a.imgH
	face := a.st.face()
	e.used(face).Add(' ')
	w := ref.box.w * f
	for _, t := range tags {
		w = math.Max(w, t.x+e.width(t.text, face, a.st.size*tagF)-x)
	}
	e.add(Item{Kind: MathBegin, X: x, Y: base, W: w, Text: ref.tex, Face: face, Size: a.st.size * f})
	e.drawBox(ref.box, x, base, f, a.st)
	for _, t := range tags {
		e.text(t.x, t.y, t.text, face, &style{size: a.st.size * tagF, color: a.st.color})
	}
	e.add(Item{Kind: MathEnd, X: x, Y: base, W: w, Face: face, Size: a.st.size * f})
}

// rowLabels appends the labels of n's labelled rows to out, in order.
func rowLabels(n *mnode, out []string) []string {
	if n.tag == "mlabeledtr" {
		if t, ok := labelText(n.kids); ok {
			out = append(out, t)
		}
	}
	for _, k := range n.kids {
		out = rowLabels(k, out)
	}
	return out
}

// rowTags appends the row labels of the tables in b, placed at y in the
// formula, to out, each with its baseline in the formula.
func (b *mbox) rowTags(y float64, out []mlabel) []mlabel {
	for _, l := range b.labels {
		out = append(out, mlabel{y: y + l.y, text: l.text})
	}
	for _, k := range b.kids {
		out = k.b.rowTags(y+k.y, out)
	}
	return out
}

// fitMath breaks inline formulas wider than width where they may break
// (mathbreak.go) and scales those, or their pieces, still wider down to
// it. It returns atoms, or a copy when it broke a formula.
func (e *engine) fitMath(atoms []atom, width float64) []atom {
	if width <= 0 {
		return atoms
	}
	for i := 0; i < len(atoms); i++ {
		a := &atoms[i]
		if a.kind != aMath && a.kind != aBlockMath || a.w <= width {
			continue
		}
		if ref := e.maths[a.img]; a.kind == aMath && a.imgH == 1 && len(ref.cuts) > 0 {
			pieces := e.mathPieces(*a)
			atoms = append(atoms[:i:i], append(pieces, atoms[i+1:]...)...)
			a = &atoms[i]
			if a.w <= width {
				continue
			}
		}
		a.imgH *= width / a.w
		a.w = width
	}
	return atoms
}

// mathExtent is how far a formula atom reaches above and below the
// baseline.
func (e *engine) mathExtent(a *atom) (asc, desc float64) {
	b := e.maths[a.img].box
	return b.asc * a.imgH, b.desc * a.imgH
}

// drawFormula draws a formula atom whose pen is at x on the baseline base.
// The text extracted for it is anchored to invisible text of the
// formula's size, scaled as the formula is.
func (e *engine) drawFormula(a *atom, x, base float64) {
	ref := e.maths[a.img]
	f := a.imgH
	if ref.tag != "" || len(ref.rows) > 0 {
		tagX := x + (ref.box.w+a.st.size)*f
		tags := []placedTag{{tagX, base, ref.tag}}
		if len(ref.rows) > 0 {
			tags = tags[:0]
			for _, r := range ref.rows {
				tags = append(tags, placedTag{tagX, base + r.y*f, r.text})
			}
		}
		e.drawTagged(a, x, base, tags, f)
		return
	}
	face := a.st.face()
	e.used(face).Add(' ')
	e.add(Item{Kind: MathBegin, X: x, Y: base, W: ref.box.w * f, Text: ref.tex, Face: face, Size: a.st.size * f})
	e.drawBox(ref.box, x, base, f, a.st)
	e.add(Item{Kind: MathEnd, X: x, Y: base, W: ref.box.w * f, Face: face, Size: a.st.size * f})
}

// items is how many drawing items b draws.
func (b *mbox) items() int {
	n := len(b.rules)
	if b.text != "" {
		n++
	}
	for _, k := range b.kids {
		n += k.b.items()
	}
	return n
}

// drawBox draws b with its origin at (x, y), scaled by f, in st's colour.
func (e *engine) drawBox(b *mbox, x, y, f float64, st *style) {
	if b.hidden {
		return
	}
	if b.text != "" {
		e.text(x, y, b.text, b.face, &style{size: b.size * f, color: st.color})
	}
	for _, r := range b.rules {
		e.add(Item{Kind: Line, X: x + r.x1*f, Y: y + r.y1*f, X2: x + r.x2*f, Y2: y + r.y2*f,
			LineWidth: r.lw * f, Color: st.color})
	}
	for _, k := range b.kids {
		e.drawBox(k.b, x+k.x*f, y+k.y*f, f, st)
	}
}
