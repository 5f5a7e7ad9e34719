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
}

// formula lays out the MathML of math node n in style st, or reports
// false when n is to be printed as its source: no MathML (the parser did
// not convert it) or MathML outside the subset.
func (e *engine) formula(n *stage.Node, st *style) (atom, bool) {
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
	if display {
		tag = n.Attr("mathtag")
		for _, r := range tag {
			if !e.fonts.Face(st.face()).Has(r) {
				// A tag is drawn in the text's face alone, which lacks
				// this character: the formula prints as source, whole,
				// before it is laid out and charged to the bounds.
				return atom{}, false
			}
		}
	}
	c := mctx{size: st.size, base: st.size, display: display}
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
	items := b.items() + 2 + 2*len(cuts) // and MathBegin, MathEnd per piece
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
	ref := mathRef{box: b, tex: n.Text, row: row, cuts: cuts, tag: tag}
	e.maths = append(e.maths, ref)
	w := b.w
	if ref.tag != "" {
		// Where the formula is not on lines of its own (a table's cell),
		// its tag follows it an em on, as on Chromium: the atom holds both.
		w += st.size + e.width(ref.tag, st.face(), st.size)
	}
	return atom{kind: kind, img: len(e.maths) - 1, w: w, imgH: 1, text: n.Text, st: st}, true
}

// displayMath lays out a display math block, or reports false to print
// it as a code block.
func (e *engine) displayMath(n *stage.Node) bool {
	a, ok := e.formula(n, e.baseStyle())
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
	case ref.tag == "":
		e.drawFormula(&a, x, base)
	case fit.below:
		e.drawTagged(&a, x, base, e.x1-fit.tagW, top+fit.asc+fit.desc+2*fit.pad+face.Ascent*a.st.size*fit.tagF, fit.tagF)
	default:
		e.drawTagged(&a, x, base, e.x1-fit.tagW, base, fit.tagF)
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
	if ref.tag != "" {
		d.tagW = e.width(ref.tag, a.st.face(), a.st.size)
		if d.tagW > col {
			// Not past the left margin either.
			d.tagF, d.tagW = col/d.tagW, col
		}
		room := e.x1 - d.tagW - a.st.size
		if b.w*f <= room-e.x0 || room-e.x0 >= col/2 {
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

// drawTagged draws a display formula on baseline base and its tag at
// tagX on baseline tagBase, scaled by tagF, both inside the span whose
// text is the formula's TeX: the TeX holds the \tag, and a reader copies
// it once, not the tag's text after it.
func (e *engine) drawTagged(a *atom, x, base, tagX, tagBase, tagF float64) {
	ref := e.maths[a.img]
	f := a.imgH
	face := a.st.face()
	e.used(face).Add(' ')
	w := tagX + e.width(ref.tag, face, a.st.size*tagF) - x
	e.add(Item{Kind: MathBegin, X: x, Y: base, W: w, Text: ref.tex, Face: face, Size: a.st.size * f})
	e.drawBox(ref.box, x, base, f, a.st)
	e.text(tagX, tagBase, ref.tag, face, &style{size: a.st.size * tagF, color: a.st.color})
	e.add(Item{Kind: MathEnd, X: x, Y: base, W: w, Face: face, Size: a.st.size * f})
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
	if ref.tag != "" {
		e.drawTagged(a, x, base, x+(ref.box.w+a.st.size)*f, base, f)
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
