package layout

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
)

// The layout of the elements that stack: scripts, limits and accents,
// fractions, radicals and tables (see mathbox.go for the rules).

// scripts lays out msub, msup and msubsup.
func (m *mathLayout) scripts(n *mnode, c mctx) (*mbox, error) {
	base, err := m.lay(n.kids[0], c)
	if err != nil {
		return nil, err
	}
	sc := c.script()
	var sub, sup *mbox
	switch n.tag {
	case "msub":
		sub, err = m.lay(n.kids[1], sc)
	case "msup":
		sup, err = m.lay(n.kids[1], sc)
	default:
		if sub, err = m.lay(n.kids[1], sc); err == nil {
			sup, err = m.lay(n.kids[2], sc)
		}
	}
	if err != nil {
		return nil, err
	}
	return m.attach(base, sub, sup, c, italicBase(n.kids[0])), nil
}

// italicBase reports whether a script's base leans right, so that its
// superscript moves right with it.
func italicBase(n *mnode) bool {
	if n.tag != "mi" || n.attr("mathvariant") != "" {
		return false
	}
	t := strings.TrimSpace(n.text)
	r, size := utf8.DecodeRuneInString(t)
	return size == len(t) && unicode.IsLetter(r)
}

// attach places scripts beside base, as TeX's rules 18a-f do in spirit:
// a superscript's bottom clears the baseline, a subscript's top stays
// below the x-height, and the two keep apart.
func (m *mathLayout) attach(base, sub, sup *mbox, c mctx, italic bool) *mbox {
	s := c.size
	out := &mbox{}
	out.place(base, 0, 0)
	x := base.w
	var u, v float64
	if sup != nil {
		u = math.Max(base.asc-0.3*s, math.Max(0.36*s, sup.desc+0.12*s))
		if c.display {
			u = math.Max(u, 0.42*s)
		}
	}
	if sub != nil {
		v = math.Max(base.desc+0.05*s, math.Max(0.15*s, sub.asc-0.35*s))
		if sup != nil {
			v = math.Max(v, 0.22*s)
			if gap := (u - sup.desc) - (sub.asc - v); gap < 0.16*s {
				v += 0.16*s - gap
			}
		}
	}
	w := x
	if sup != nil {
		dx := 0.0
		if italic {
			dx = 0.06 * s
		}
		out.place(sup, x+dx, -u)
		w = math.Max(w, x+dx+sup.w)
	}
	if sub != nil {
		out.place(sub, x, v)
		w = math.Max(w, x+sub.w)
	}
	out.w = w + 0.05*s
	return out
}

// movable reports whether n's limits go beside it outside display style
// (sums, lim).
func movable(n *mnode) bool {
	switch n.tag {
	case "mo", "mi":
		return n.attr("movablelimits") == "true"
	case "mrow":
		return len(n.kids) == 1 && movable(n.kids[0])
	}
	return false
}

// limits lays out munder, mover and munderover: limits centred over and
// under their base, accents close over it, limits of sums beside them
// outside display style.
func (m *mathLayout) limits(n *mnode, c mctx) (*mbox, error) {
	base, err := m.lay(n.kids[0], c)
	if err != nil {
		return nil, err
	}
	var under, over *mnode
	switch n.tag {
	case "munder":
		under = n.kids[1]
	case "mover":
		over = n.kids[1]
	default:
		under, over = n.kids[1], n.kids[2]
	}
	if !c.display && movable(n.kids[0]) {
		var sub, sup *mbox
		if under != nil {
			if sub, err = m.lay(under, c.script()); err != nil {
				return nil, err
			}
		}
		if over != nil {
			if sup, err = m.lay(over, c.script()); err != nil {
				return nil, err
			}
		}
		return m.attach(base, sub, sup, c, false), nil
	}
	s := c.size
	var ub, ob *mbox
	if under != nil {
		if ub, err = m.script(under, base.w, n.attr("accentunder") == "true", c); err != nil {
			return nil, err
		}
	}
	if over != nil {
		if ob, err = m.script(over, base.w, n.attr("accent") == "true", c); err != nil {
			return nil, err
		}
	}
	w := base.w
	if ub != nil {
		w = math.Max(w, ub.w)
	}
	if ob != nil {
		w = math.Max(w, ob.w)
	}
	out := &mbox{}
	out.place(base, (w-base.w)/2, 0)
	gap := 0.12 * s
	if ob != nil {
		out.place(ob, (w-ob.w)/2, -(base.asc + gap + ob.desc))
	}
	if ub != nil {
		out.place(ub, (w-ub.w)/2, base.desc+gap+ub.asc)
	}
	out.w = w
	return out, nil
}

// script lays out an under or over script of a base w wide: an accent in
// the base's style, a limit in script style; a bar, brace or arrow spans
// the base.
func (m *mathLayout) script(n *mnode, w float64, accent bool, c mctx) (*mbox, error) {
	sc := c
	if !accent {
		sc = c.script()
	}
	if n.tag == "mo" {
		s := c.size
		t := rule(s)
		text := strings.TrimSpace(n.text)
		if spacing, ok := spacingAccents[text]; ok {
			// A combining mark alone has no advance and hangs left of
			// the pen; its spacing form centres over the base.
			text = spacing
			n = &mnode{tag: n.tag, text: spacing, attrs: n.attrs}
		}
		switch text {
		case "¯", "‾", "_", "―", "─":
			return &mbox{w: w, asc: t, rules: []mrule{{0, -t / 2, w, -t / 2, t}}}, nil
		case "⏞", "⏟":
			// A brace: a rule with its ends bent towards the base and
			// a point away from it in the middle.
			h := 0.25 * s
			y0, y1 := 0.0, -h // over: ends down at 0, rule at -h/2, point up at -h
			if strings.TrimSpace(n.text) == "⏟" {
				y0, y1 = -h, 0
			}
			mid := (y0 + y1) / 2
			return &mbox{w: w, asc: h, rules: []mrule{
				{0, y0, 0.1 * s, mid, t}, {0.1 * s, mid, w/2 - 0.1*s, mid, t},
				{w/2 - 0.1*s, mid, w / 2, y1, t}, {w / 2, y1, w/2 + 0.1*s, mid, t},
				{w/2 + 0.1*s, mid, w - 0.1*s, mid, t}, {w - 0.1*s, mid, w, y0, t},
			}}, nil
		case "⃗", "→":
			if accent {
				head, err := m.glyphs("→", fonts.Of(fonts.Serif, fonts.Regular), s*0.7)
				if err != nil {
					return nil, err
				}
				if w <= head.w*1.2 {
					return head, nil
				}
				// Stretched: a shaft, and the arrow's head at its end.
				out := &mbox{}
				mid := -(head.asc - head.desc) / 2
				out.rules = append(out.rules, mrule{0, mid, w - head.w/2, mid, t})
				out.place(head, w-head.w, 0)
				return out, nil
			}
		}
	}
	return m.lay(n, sc)
}

// spacingAccents are the spacing forms of the combining marks the
// converter writes as accents.
var spacingAccents = map[string]string{
	"\u0300": "`", "\u0301": "´", "\u0302": "ˆ", "\u0303": "˜", "\u0304": "¯", "\u0305": "¯",
	"\u0306": "˘", "\u0307": "˙", "\u0308": "¨", "\u030A": "˚", "\u030C": "ˇ", "\u0332": "_", "~": "˜",
}

// frac lays out a fraction: numerator over denominator, centred, with a
// bar on the math axis.
func (m *mathLayout) frac(n *mnode, c mctx) (*mbox, error) {
	switch n.attr("displaystyle") { // \dfrac, \tfrac
	case "true":
		c.display = true
	case "false":
		c.display = false
	}
	fc := c.fraction()
	num, err := m.lay(n.kids[0], fc)
	if err != nil {
		return nil, err
	}
	den, err := m.lay(n.kids[1], fc)
	if err != nil {
		return nil, err
	}
	s := c.size
	t := rule(s)
	if lt := n.attr("linethickness"); lt == "0" || lt == "0em" || lt == "0pt" {
		t = 0
	}
	axis := m.axis * s
	gap := math.Max(t, 0.08*s)
	if c.display {
		gap = math.Max(3*t, 0.15*s)
	}
	u := axis + t/2 + gap + num.desc
	v := den.asc + gap - axis + t/2
	if c.display {
		u, v = math.Max(u, 0.68*s), math.Max(v, 0.6*s)
	}
	pad := 0.12 * s
	w := math.Max(num.w, den.w) + 2*pad
	out := &mbox{}
	out.place(num, (w-num.w)/2, -u)
	out.place(den, (w-den.w)/2, v)
	if t > 0 {
		out.rules = append(out.rules, mrule{pad / 2, -axis, w - pad/2, -axis, t})
		out.asc = math.Max(out.asc, axis+t/2)
	}
	out.w = w
	return out, nil
}

// radical draws a radical sign before body, with a bar over it, and the
// index (mroot) over the sign's tick.
func (m *mathLayout) radical(body, index *mbox, c mctx) *mbox {
	s := c.size
	t := rule(s)
	clear := 0.12 * s
	if c.display {
		clear = 0.2 * s
	}
	top := -(body.asc + clear + t/2)
	bottom := body.desc + 0.08*s
	h := bottom - top
	sw := 0.55*s + 0.05*h // the sign's width grows a little with its height
	mid := bottom - math.Min(0.5*h, 0.5*s)
	x0 := 0.0
	if index != nil {
		// The index sits over the tick, its right end near the sign's
		// lowest point; a wide index pushes the sign right.
		x0 = math.Max(0, index.w-0.45*sw)
	}
	out := &mbox{}
	if index != nil {
		out.place(index, x0+0.45*sw-index.w, mid-0.08*s-index.desc)
	}
	bx := x0 + sw + 0.06*s
	out.place(body, bx, 0)
	out.rules = append(out.rules,
		mrule{x0 + 0.05*s, mid + 0.06*s, x0 + 0.17*s, mid, t},
		mrule{x0 + 0.17*s, mid, x0 + 0.45*sw, bottom, 2 * t},
		mrule{x0 + 0.45*sw, bottom, x0 + sw, top, t},
		mrule{x0 + sw, top, bx + body.w + 0.06*s, top, t},
	)
	out.asc = math.Max(out.asc, -top+t/2)
	out.desc = math.Max(out.desc, bottom)
	out.w = bx + body.w + 0.1*s
	return out
}

// table lays out a matrix: cells centred in their columns, rows apart,
// the whole centred on the axis. A table of width 100% (the parser's
// multline) spans c.width, its rows flush left and flush right an em
// from its ends; a row of MathML's <mlabeledtr> has its label, its first
// cell, taken out to be drawn at the margin (see labels).
func (m *mathLayout) table(n *mnode, c mctx) (*mbox, error) {
	if n.attr("displaystyle") == "true" { // aligned, gathered
		c.display = true
	}
	span := 0.0
	if n.attr("width") == "100%" {
		span = c.width
	}
	c.width = 0
	var rows [][]*mbox
	var aligns [][]string
	var widths []float64
	var labels []string // per row, "" for none
	// joined[i] is the room between columns i and i+1 when they are an
	// aligned pair (see alignedPair), -1 when they are not.
	var joined []float64
	tableAligns := strings.Fields(n.attr("columnalign"))
	s := c.size
	for _, r := range n.kids {
		kids := r.kids
		label := ""
		switch r.tag {
		case "mtr":
		case "mlabeledtr":
			var ok bool
			if label, ok = labelText(kids); !ok {
				return nil, errMathUnsupported
			}
			kids = kids[1:]
		default:
			return nil, errMathUnsupported
		}
		labels = append(labels, label)
		var cells []*mbox
		var al []string
		for i, cell := range kids {
			if cell.tag != "mtd" {
				return nil, errMathUnsupported
			}
			b, err := m.lay(cell, c)
			if err != nil {
				return nil, err
			}
			cells = append(cells, b)
			a := cell.attr("columnalign")
			if a == "" && len(tableAligns) > 0 {
				a = tableAligns[min(i, len(tableAligns)-1)]
			}
			al = append(al, a)
			if i == len(widths) {
				widths = append(widths, 0)
				joined = append(joined, -1)
			}
			w := b.w
			if span > 0 && a != "center" {
				w += s // the em from the table's end
			}
			widths[i] = math.Max(widths[i], w)
			if i > 0 {
				if gap, ok := alignedPair(kids[i-1], cell, s); ok {
					joined[i-1] = math.Max(joined[i-1], gap)
				}
			}
		}
		rows = append(rows, cells)
		aligns = append(aligns, al)
	}
	if span > 0 && len(widths) == 1 {
		widths[0] = math.Max(widths[0], span-0.4*s)
	}
	colGap, rowGap := 0.8*s, 0.25*s
	gapAfter := func(i int) float64 {
		if joined[i] >= 0 {
			return joined[i]
		}
		return colGap
	}
	out := &mbox{}
	y := 0.0
	var baselines []float64
	for ri, cells := range rows {
		asc, desc := 0.6*s, 0.2*s
		for _, b := range cells {
			asc, desc = math.Max(asc, b.asc), math.Max(desc, b.desc)
		}
		y += asc
		baselines = append(baselines, y)
		x := 0.2 * s
		for i, b := range cells {
			dx := (widths[i] - b.w) / 2
			switch aligns[ri][i] {
			case "left":
				dx = 0
				if span > 0 {
					dx = s
				}
			case "right":
				dx = widths[i] - b.w
				if span > 0 {
					dx -= s
				}
			}
			out.place(b, x+dx, y)
			x += widths[i] + gapAfter(i)
		}
		y += desc + rowGap
	}
	total := math.Max(0, y-rowGap)
	// Shift the rows so that the table's middle is on the axis.
	dy := -total/2 - m.axis*s
	for i := range out.kids {
		out.kids[i].y += dy
	}
	for i, l := range labels {
		if l != "" {
			out.labels = append(out.labels, mlabel{y: baselines[i] + dy, text: l})
		}
	}
	out.asc, out.desc = total/2+m.axis*s, total/2-m.axis*s
	w := 0.2 * s
	for i, cw := range widths {
		w += cw
		if i < len(widths)-1 {
			w += gapAfter(i)
		}
	}
	out.w = w + 0.2*s
	return out, nil
}

// enclose draws \boxed's frame (notation box) round what n holds, with
// TeX's \fboxsep of room, or \cancel's strokes (updiagonalstrike,
// downdiagonalstrike, both for \xcancel) across it. Another notation is
// not drawn, so the formula prints as its source rather than without it.
func (m *mathLayout) enclose(n *mnode, c mctx) (*mbox, error) {
	notes := strings.Fields(n.attr("notation"))
	if len(notes) == 0 {
		return nil, errMathUnsupported
	}
	body, err := m.row(n.kids, c)
	if err != nil {
		return nil, err
	}
	t := rule(c.size)
	o := 0.15 * c.size
	out := &mbox{}
	box := slices.Contains(notes, "box")
	pad := 0.0
	if box {
		pad = 0.2*c.size + t
	}
	out.place(body, pad, 0)
	out.w += pad
	out.asc += pad
	out.desc += pad
	for _, note := range notes {
		switch note {
		case "box":
			l, r, top, bot := t/2, out.w-t/2, -out.asc+t/2, out.desc-t/2
			out.rules = append(out.rules, mrule{l, top, r, top, t}, mrule{l, bot, r, bot, t},
				mrule{l, top, l, bot, t}, mrule{r, top, r, bot, t})
		// The strokes overshoot the box a little, as the cancel package's
		// do: across a lone x one corner to corner lay on its own stroke.
		case "updiagonalstrike":
			out.rules = append(out.rules, mrule{pad - o, body.desc + o, pad + body.w + o, -body.asc - o, t})
		case "downdiagonalstrike":
			out.rules = append(out.rules, mrule{pad - o, -body.asc - o, pad + body.w + o, body.desc + o, t})
		default:
			return nil, errMathUnsupported
		}
	}
	return out, nil
}

// labelText returns the text of a row's label, its first cell, which
// must hold one <mtext>: the label is drawn as text at the margin.
func labelText(kids []*mnode) (string, bool) {
	if len(kids) < 2 || kids[0].tag != "mtd" || len(kids[0].kids) != 1 || kids[0].kids[0].tag != "mtext" {
		return "", false
	}
	t := strings.TrimSpace(kids[0].kids[0].text)
	return t, t != ""
}

// alignedPair reports whether cells a and b, side by side, are the two
// halves of an aligned equation (a &= b in aligned, align): the
// converter marks those cells right and left aligned themselves, and
// TeX joins them with no column space, so "a &= b" reads as "a = b".
// The room between them is the space TeX puts before the operator that
// opens b, which row does not put before a row's first element.
func alignedPair(a, b *mnode, size float64) (float64, bool) {
	if a.attr("columnalign") != "right" || b.attr("columnalign") != "left" {
		return 0, false
	}
	if len(b.kids) == 0 {
		return 0, true
	}
	switch opClassOf(b.kids[0]) {
	case opRel:
		return 5 * size / 18, true
	case opBin:
		return 4 * size / 18, true
	}
	return 0, true
}
