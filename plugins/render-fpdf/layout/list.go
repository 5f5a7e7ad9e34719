package layout

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mdpress/mdpress/sdk/stage"
)

// marker is a list item's bullet, number or check box, drawn beside the
// first line its item places, whatever kind of block that line belongs to.
type marker struct {
	text  string
	st    *style
	right float64 // the marker's right edge
	// left is the marker's left edge when rtl: a right-to-left item has its
	// marker on its right.
	left     float64
	rtl      bool
	checkbox bool
	checked  bool
	anchors  []string // named at the marker's line
}

// bullets by nesting level, as browsers cycle them.
var bullets = []string{"•", "◦", "▪"}

func (e *engine) list(n *stage.Node) {
	defer e.restoreDirection(e.rtl, e.inherit)
	e.container(n.Children)
	ordered := n.Attr("ordered") == "true"
	start := 1
	if s, err := strconv.Atoi(n.Attr("start")); err == nil && s >= 0 && s < 1e9 {
		start = s
	}
	st := e.baseStyle()
	indent := st.size * 1.5
	if ordered {
		widest := e.width(strconv.Itoa(start+len(n.Children)-1)+".", st.face(), st.size)
		indent = math.Max(indent, widest+st.size*0.6)
	}
	// A list directly in an item has its item spacing above it and no
	// margin under it (li > ul, li > ol in the themes): what follows it
	// in the item starts under its last item's last block's own margin.
	// Only a list whose parent is the item itself, not a quote or an
	// HTML element inside it, is li > ul.
	nested := e.inItem() && len(e.blockOpen) == e.blockBase
	if nested {
		e.addGap(e.th.itemGap)
	}
	outer, outerItem := e.tight, e.itemDepth
	e.tight = n.Attr("tight") == "true"
	e.itemDepth = e.depth + 1
	e.listDepth++
	for i, item := range n.Children {
		e.tick()
		if i > 0 {
			// li + li: collapses with the margin of the block that ends
			// the item before, the larger counting.
			e.addGap(e.th.itemGap)
		}
		d := e.indentStart(indent)
		m := marker{st: st, right: e.x0 - st.size*0.45, left: e.x1 + st.size*0.45, rtl: e.rtl}
		switch {
		case item.Attr("task") == "true":
			m.checkbox, m.checked = true, item.Attr("checked") == "true"
		case ordered && e.rtl:
			// Chromium shows "1." in right-to-left order: ".1".
			m.text = "." + strconv.Itoa(start+i)
		case ordered:
			m.text = strconv.Itoa(start+i) + "."
		default:
			m.text = bullets[(e.listDepth-1)%len(bullets)]
		}
		e.markers = append(e.markers, m)
		end := e.blockScope()
		e.blocks(item.Children)
		end()
		e.flushMarkers()
		e.outdentStart(d)
	}
	e.tight, e.itemDepth = outer, outerItem
	e.listDepth--
	if !nested {
		e.addGap(e.th.gap)
	}
}

// listNumber parses an <ol start> or <li value>: any integer, zero and
// negative ones too, as Chromium prints them; beyond +-1e9 it is ignored.
func listNumber(s string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	return n, err == nil && n > -1e9 && n < 1e9
}

// counter prints n in the counter style an <ol type> names, as Chromium
// does: "a"/"A" letters (z, aa, ab ...), "i"/"I" roman numerals, anything
// else decimal. Numbers outside a style's range (below 1 for letters,
// outside 1-3999 for roman numerals) fall back to decimal, as CSS says.
func counter(n int, typ string) string {
	switch {
	case (typ == "a" || typ == "A") && n >= 1:
		var b []byte
		for ; n > 0; n = (n - 1) / 26 {
			b = append(b, typ[0]+byte((n-1)%26))
		}
		slices.Reverse(b)
		return string(b)
	case (typ == "i" || typ == "I") && n >= 1 && n <= 3999:
		s := roman(n)
		if typ == "I" {
			return strings.ToUpper(s)
		}
		return s
	}
	return strconv.Itoa(n)
}

var romanDigits = []struct {
	v int
	s string
}{{1000, "m"}, {900, "cm"}, {500, "d"}, {400, "cd"}, {100, "c"}, {90, "xc"}, {50, "l"}, {40, "xl"}, {10, "x"}, {9, "ix"}, {5, "v"}, {4, "iv"}, {1, "i"}}

func roman(n int) string {
	var b strings.Builder
	for _, d := range romanDigits {
		for ; n >= d.v; n -= d.v {
			b.WriteString(d.s)
		}
	}
	return b.String()
}

// drawMarkers draws the pending markers on the line whose baseline is base.
func (e *engine) drawMarkers(base float64) {
	for _, m := range e.markers {
		for _, a := range m.anchors {
			e.anchor(a, base-m.st.size*1.2)
		}
		if m.checkbox {
			e.checkbox(m, base)
			continue
		}
		if m.text == "" {
			continue
		}
		face := m.st.face()
		r, f := e.resolve([]rune(m.text)[0], face)
		txt := m.text
		if len(m.text) == len(string(r)) { // a bullet: may need another face
			face, txt = f, string(r)
		}
		x := m.left
		if !m.rtl {
			x = m.right - e.width(txt, face, m.st.size)
		}
		e.text(x, base, txt, face, m.st)
	}
	e.markers = e.markers[:0]
}

// flushMarkers draws markers whose item placed nothing, on an empty line.
func (e *engine) flushMarkers() {
	if len(e.markers) == 0 {
		return
	}
	f := e.fonts.Face(e.doc.Body)
	size := e.th.size * e.scale
	top := e.place(e.lineHeight())
	e.drawMarkers(top + (e.lineHeight()-(f.Ascent+f.Descent)*size)/2 + f.Ascent*size)
	e.addGap(e.paraGap())
}

// checkbox draws a task list box, ticked when checked.
func (e *engine) checkbox(m marker, base float64) {
	s := m.st.size * 0.78
	x, y := m.right-s, base-s+m.st.size*0.06
	if m.rtl {
		x = m.left
	}
	if m.checked {
		e.add(Item{Kind: Fill, X: x, Y: y, W: s, H: s, Color: e.th.link})
		lw := math.Max(0.8, s*0.13)
		white := RGB{255, 255, 255}
		e.add(Item{Kind: Line, X: x + s*0.2, Y: y + s*0.52, X2: x + s*0.42, Y2: y + s*0.74, LineWidth: lw, Color: white})
		e.add(Item{Kind: Line, X: x + s*0.42, Y: y + s*0.74, X2: x + s*0.8, Y2: y + s*0.26, LineWidth: lw, Color: white})
		return
	}
	e.add(Item{Kind: Stroke, X: x, Y: y, W: s, H: s, LineWidth: math.Max(0.6, s*0.08), Color: e.th.muted})
}
