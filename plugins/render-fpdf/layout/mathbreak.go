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
// and the indices in it of the elements that start a piece after a break
// point, or nothing when it has none.
func mathBreaks(root *mnode, b *mbox) (*mbox, []int) {
	n := root
	for len(n.kids) == 1 && n.kids[0].tag == "mrow" && len(b.kids) == 1 && b.kids[0].x == 0 && b.kids[0].y == 0 {
		n, b = n.kids[0], b.kids[0].b
	}
	if n.tag != "math" && n.tag != "mrow" || len(n.kids) != len(b.kids) || b.hidden {
		return nil, nil
	}
	var cuts []int
	prev := opOpen
	for i := range n.kids {
		cls := rowClass(n.kids, i, prev)
		if (cls == opBin || cls == opRel) && i < len(n.kids)-1 {
			cuts = append(cuts, i+1)
		}
		prev = cls
	}
	if len(cuts) == 0 {
		return nil, nil
	}
	return b, cuts
}

// mathPieces cuts formula atom a into pieces at its break points, each
// a formula atom after which a line may break. A piece runs from the pen
// of its first element to the next piece's.
func (e *engine) mathPieces(a atom) []atom {
	ref := e.maths[a.img]
	row := ref.row
	starts := append([]int{0}, ref.cuts...)
	var out []atom
	for k, i0 := range starts {
		i1, x1 := len(row.kids), row.w
		if k+1 < len(starts) {
			i1 = starts[k+1]
			x1 = row.kids[i1].x
		}
		x0 := row.kids[i0].x
		piece := &mbox{}
		for _, kid := range row.kids[i0:i1] {
			piece.place(kid.b, kid.x-x0, kid.y)
		}
		piece.w = math.Max(piece.w, x1-x0)
		tex := ""
		if k == 0 {
			tex = ref.tex
		}
		e.maths = append(e.maths, mathRef{box: piece, tex: tex, piece: true})
		e.atom()
		out = append(out, atom{kind: aMath, img: len(e.maths) - 1, w: piece.w, imgH: 1, text: tex, st: a.st, wrap: true})
	}
	out[len(out)-1].wrap = a.wrap
	return out
}
