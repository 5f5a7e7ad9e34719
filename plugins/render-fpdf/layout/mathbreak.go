package layout

import "math"

// An inline formula wider than its line breaks after a binary operator or
// a relation of its outermost row, as TeX breaks inline math, and only
// its pieces still wider than the line are scaled down: scaled whole, a
// sum of eighty terms came out a few tenths of a point tall. A formula
// that fits moves to the next line whole, as Chromium moves it. What a
// reader extracts for a broken formula is its TeX once, at its first
// piece; the others extract nothing.

// mathBreaks finds the outermost row of a formula, root laid out as b,
// and the pens at which the pieces after its break points start, or
// nothing when it has none.
func mathBreaks(root *mnode, b *mbox) (*mbox, []float64) {
	n := root
	for len(n.kids) == 1 && n.kids[0].tag == "mrow" && len(b.kids) == 1 && b.kids[0].x == 0 && b.kids[0].y == 0 {
		n, b = n.kids[0], b.kids[0].b
	}
	if n.tag != "math" && n.tag != "mrow" || len(n.kids) != len(b.kids) || b.hidden {
		return nil, nil
	}
	var cuts []float64
	prev := opOpen
	for i := range n.kids {
		cls := rowClass(n.kids, i, prev)
		if (cls == opBin || cls == opRel) && i < len(n.kids)-1 {
			cuts = append(cuts, b.kids[i+1].x)
		}
		prev = cls
	}
	if len(cuts) == 0 {
		return nil, nil
	}
	return b, cuts
}

// mathPieces cuts formula atom a into pieces at its break points, each
// a formula atom after which a line may break.
func (e *engine) mathPieces(a atom) []atom {
	ref := e.maths[a.img]
	row := ref.row
	starts := append([]float64{0}, ref.cuts...)
	var out []atom
	for k, x0 := range starts {
		x1 := row.w
		if k+1 < len(starts) {
			x1 = starts[k+1]
		}
		piece := &mbox{w: x1 - x0}
		for _, kid := range row.kids {
			if kid.x >= x0 && kid.x < x1 {
				piece.place(kid.b, kid.x-x0, kid.y)
			}
		}
		piece.w = math.Max(piece.w, x1-x0)
		tex := ""
		if k == 0 {
			tex = ref.tex
		}
		e.maths = append(e.maths, mathRef{box: piece, tex: tex, piece: true})
		e.atom()
		p := atom{kind: aMath, img: len(e.maths) - 1, w: piece.w, imgH: 1, text: tex, st: a.st, wrap: true}
		out = append(out, p)
	}
	out[len(out)-1].wrap = a.wrap
	return out
}
