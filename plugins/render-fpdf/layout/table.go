package layout

import (
	"math"
	"slices"

	"github.com/mdpress/mdpress/sdk/stage"
)

const (
	cellPadX = 5.0
	cellPadY = 3.5
	maxCols  = 64
)

type cell struct {
	atoms []atom
	al    align
	lines []line
}

type tableRow struct {
	cells  []cell
	header bool
	// stripe: the row is an even one of the body, which the theme's
	// stripe shades as the CSS's tbody tr:nth-child(even).
	stripe bool
}

// stripeAttr marks the rows of an HTML table that are even ones of their
// row group ("true"), and on the table says its rows are marked so
// ("rows"): a browser counts each tbody's rows, a leading row of <th>
// cells outside a <thead> among them, where a Markdown table's body rows
// simply alternate. The NUL keeps it apart from any attribute the parser
// sends.
const stripeAttr = "\x00stripe"

// table lays out a GFM table: column widths from content, cells wrapped,
// borders and a shaded header row that is repeated on every page the table
// continues on. A row taller than a page is split between lines.
func (e *engine) table(n *stage.Node) {
	// A table has no dir of its own (parse-goldmark gives it none), so in
	// Chromium it takes its container's: in a right-to-left list, quote or
	// <div dir="rtl"> its first column is on the right and its cells'
	// lines start from the right.
	defer e.restoreDirection(e.rtl, e.inherit)
	e.rtl = e.htmlDir() == bR
	rows := e.tableRows(n)
	if len(rows) == 0 {
		return
	}
	ncol := 0
	for _, r := range rows {
		ncol = max(ncol, len(r.cells))
	}
	widths := e.columnWidths(rows, ncol)
	st := e.baseStyle()
	for ri := range rows {
		for c := range rows[ri].cells {
			cl := &rows[ri].cells[c]
			inner := widths[c] - 2*padX(widths[c])
			fitImages(cl.atoms, inner)
			cl.lines = e.breakLines(cl.atoms, inner, st)
		}
	}
	var head []tableRow
	for len(rows) > 0 && rows[0].header {
		head, rows = append(head, rows[0]), rows[1:]
	}
	if n.Attr(stripeAttr) == "" {
		for i := 1; i < len(rows); i += 2 {
			rows[i].stripe = true
		}
	}
	headH := 0.0
	for _, r := range head {
		headH += rowHeight(r, make([]int, len(r.cells)))
	}
	// A header taller than half a page is not repeated, only drawn once.
	repeat := headH <= (e.bottom-e.top)/2
	if !repeat {
		rows, head, headH = append(head, rows...), nil, 0
	}
	first := headH
	if len(rows) > 0 {
		first += math.Min(rowHeight(rows[0], make([]int, len(rows[0].cells))), e.lineHeight()+2*cellPadY)
	}
	if !e.fits(first) {
		e.newPage()
	}
	drawHead := func() {
		for _, r := range head {
			e.rowChunk(r, make([]int, len(r.cells)), widths, math.Inf(1))
		}
	}
	drawHead()
	for _, r := range rows {
		e.tick()
		next := make([]int, len(r.cells))
		for !rowDone(r, next) {
			h := rowHeight(r, next)
			room := e.bottom - e.y - e.gap
			if e.atTop() {
				room = e.bottom - e.y
			}
			fresh := e.bottom - e.top - headH
			if h > room+eps && (h <= fresh || room < e.lineHeight()+2*cellPadY) && !e.atTopBelow(headH) {
				e.newPage()
				drawHead()
				continue
			}
			e.rowChunk(r, next, widths, room)
		}
	}
	e.addGap(e.th.gap)
}

// atTopBelow reports whether only the repeated header (h high) has been
// placed on this page, so moving to another page would not help.
func (e *engine) atTopBelow(h float64) bool { return e.y <= e.top+h+eps }

func (e *engine) tableRows(n *stage.Node) []tableRow {
	var rows []tableRow
	var add func(r *stage.Node, header bool)
	add = func(r *stage.Node, header bool) {
		row := tableRow{header: header, stripe: r.Attr(stripeAttr) == "true"}
		for _, c := range r.Children {
			if c == nil {
				continue
			}
			if c.Kind == stage.KindTableRow { // a head holding rows
				add(c, header)
				continue
			}
			st := e.baseStyle()
			if header {
				// In the heading colour, as modern's th is; basic's th
				// takes the text colour, which is its heading colour.
				st.bold, st.color = true, e.th.headingColor
			}
			cl := cell{atoms: e.inlines(c.Children, st), al: cellAlign(c.Attr("align"))}
			if len(row.cells) == maxCols {
				// Past the column limit, content joins the last cell.
				last := &row.cells[maxCols-1]
				last.atoms = append(append(last.atoms, atom{kind: aSpace, text: " ", st: st}), cl.atoms...)
				continue
			}
			row.cells = append(row.cells, cl)
		}
		if len(row.cells) > 0 {
			rows = append(rows, row)
		}
	}
	for _, c := range n.Children {
		if c != nil {
			add(c, c.Kind == stage.KindTableHead)
		}
	}
	return rows
}

// padX is a cell's side padding, smaller in very narrow columns.
func padX(w float64) float64 { return math.Min(cellPadX, w/6) }

func cellAlign(s string) align {
	switch s {
	case "center":
		return alignCenter
	case "right":
		return alignRight
	case "left":
		return alignLeft
	}
	return alignStart
}

// columnWidths gives each column its natural width when the table fits,
// else shares the room out between each column's longest word and its
// natural width, the way browsers size auto tables.
// A run of ideographs counts as one word here, although a line breaks
// inside it: counting each ideograph as a word gave a column of Chinese
// beside a long URL the width of one character.
func (e *engine) columnWidths(rows []tableRow, ncol int) []float64 {
	avail := e.x1 - e.x0
	lo, hi := make([]float64, ncol), make([]float64, ncol)
	for _, r := range rows {
		for c, cl := range r.cells {
			word, line, longest := 0.0, 0.0, 0.0
			for _, a := range cl.atoms {
				w := a.w
				if a.kind == aImage || a.kind == aBlockImage || a.kind == aMath || a.kind == aBlockMath {
					w = math.Min(w, avail/4)
				}
				switch a.kind {
				case aSpace:
					word = 0
					line += w
				case aBreak:
					word, line = 0, 0
				default:
					word += w
					line += w
				}
				lo[c] = math.Max(lo[c], word)
				longest = math.Max(longest, line)
			}
			hi[c] = math.Max(hi[c], longest)
		}
	}
	var sumLo, sumHi float64
	for c := range ncol {
		lo[c] += 2*cellPadX + 1
		hi[c] += 2*cellPadX + 1
		sumLo += lo[c]
		sumHi += hi[c]
	}
	w := make([]float64, ncol)
	switch {
	case sumHi <= avail:
		copy(w, hi)
	case sumLo >= avail:
		// Columns whose longest word fits a fair share keep it whole; the
		// columns of longer words (a URL, a long identifier) share what is
		// left equally and break them. Scaling every column down alike
		// broke "Description" in a table holding one long URL.
		level := waterLevel(lo, avail)
		for c := range w {
			w[c] = math.Min(lo[c], level)
		}
	default:
		f := (avail - sumLo) / (sumHi - sumLo)
		for c := range w {
			w[c] = lo[c] + (hi[c]-lo[c])*f
		}
	}
	// A column never gets less than room for a character or two; what the
	// narrow ones gain, the wide ones give back.
	floor := math.Min(2*cellPadX+e.th.size, avail/float64(ncol))
	total, flexible := 0.0, 0.0
	for c := range w {
		w[c] = math.Max(w[c], floor)
		total += w[c]
		flexible += w[c] - floor
	}
	if extra := total - avail; extra > 0 && flexible > 0 {
		for c := range w {
			w[c] -= extra * (w[c] - floor) / flexible
		}
	}
	return w
}

// waterLevel returns the width l at which the columns' widths min(want, l)
// add up to avail, given that the wants add up to more.
func waterLevel(want []float64, avail float64) float64 {
	sorted := slices.Sorted(slices.Values(want))
	left := avail
	for i, v := range sorted {
		share := left / float64(len(sorted)-i)
		if v > share {
			return share
		}
		left -= v
	}
	return sorted[len(sorted)-1]
}

// fitImages scales images wider than a cell down to its width.
func fitImages(atoms []atom, width float64) {
	for i := range atoms {
		a := &atoms[i]
		if (a.kind == aImage || a.kind == aBlockImage) && a.w > width && width > 0 {
			a.imgH *= width / a.w
			a.w = width
		}
	}
}

// rowHeight is the height of what remains of a row from line next[c] of
// each cell on.
func rowHeight(r tableRow, next []int) float64 {
	h := 0.0
	for c, cl := range r.cells {
		ch := 0.0
		for _, l := range cl.lines[next[c]:] {
			ch += l.h
		}
		h = math.Max(h, ch)
	}
	return h + 2*cellPadY
}

func rowDone(r tableRow, next []int) bool {
	for c, cl := range r.cells {
		if next[c] < len(cl.lines) {
			return false
		}
	}
	return true
}

// rowChunk places as much of a row as fits in room (at least one line of
// each unfinished cell) and advances next past what it placed.
func (e *engine) rowChunk(r tableRow, next []int, widths []float64, room float64) {
	take := make([]int, len(r.cells))
	h := 0.0
	for c, cl := range r.cells {
		ch := 0.0
		k := next[c]
		for k < len(cl.lines) && (k == next[c] || ch+cl.lines[k].h+2*cellPadY <= room+eps) {
			ch += cl.lines[k].h
			k++
		}
		take[c] = k
		h = math.Max(h, ch)
	}
	h += 2 * cellPadY
	top := e.place(h)
	// The table starts at the side its lines start from, its first column
	// there.
	left := e.x0
	if e.rtl {
		left = e.x1 - sum(widths)
	}
	switch {
	case r.header:
		e.add(Item{Kind: Fill, X: left, Y: top, W: sum(widths), H: h, Color: e.th.tableHeaderFill})
	case r.stripe && e.th.striped:
		e.add(Item{Kind: Fill, X: left, Y: top, W: sum(widths), H: h, Color: e.th.stripe})
	}
	x := left
	if e.rtl {
		x = e.x1
	}
	for c, w := range widths {
		if e.rtl {
			x -= w
		}
		e.add(Item{Kind: Stroke, X: x, Y: top, W: w, H: h, LineWidth: 0.6, Color: e.th.rule})
		if c < len(r.cells) {
			y := top + cellPadY
			for k := next[c]; k < take[c]; k++ {
				l := &r.cells[c].lines[k]
				e.emitLine(l, x+padX(w), y, w-2*padX(w), r.cells[c].al)
				y += l.h
			}
			next[c] = take[c]
		}
		if !e.rtl {
			x += w
		}
	}
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}
