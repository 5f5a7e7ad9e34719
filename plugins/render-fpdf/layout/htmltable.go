package layout

import (
	"html"
	"strings"

	"github.com/mdpress/mdpress/sdk/stage"
)

// An HTML <table> whose end tag is in the same HTML block (a README's
// feature matrix, its contributors' grid) is laid out as a GFM table is,
// which the themes style alike on Chromium: laid out as paragraphs, each
// row's cells ran together into one line of text. A table whose cells hold
// Markdown spans several HTML blocks, with the Markdown between them, and
// is still laid out as paragraphs.

// htmlTable collects a <table>'s rows from its tokens as a table node.
type htmlTable struct {
	depth int // <table> elements open, nested ones included
	head  *stage.Node
	body  []*stage.Node
	row   []*stage.Node
	ths   int // the row's cells that are <th>
	// group is the row group open (thead, tbody, tfoot), or "" for the
	// tbody a browser makes of rows outside one; rows counts its rows,
	// of which the themes stripe the even ones (tbody tr:nth-child(even)).
	group string
	rows  int
	trAl  string
	cell  *stage.Node
	src   strings.Builder // the cell's HTML, written back from its tokens
	wrote bool            // the cell has content, so a block boundary breaks its line
	brk   bool            // a block boundary is pending
	// stray is content outside every cell, which a browser moves before
	// the table (a <caption> too is drawn above it).
	stray []*token
	// skip is the element drawn nothing of (hidden) that the tokens are
	// in, or "": its tags are its text, as tablesClosed reads them.
	skip string
}

// add takes the next token of the table; it reports false once the
// table's end tag is read.
func (h *htmlTable) add(t *token) bool {
	// A "<table>" in a <style> or an <svg> opens no table: counted, the
	// table's own end tag only closed it, the table never ended, and the
	// table and the rest of its block were dropped.
	switch {
	case h.skip != "":
		if t.kind == tokEnd && t.name == h.skip {
			h.skip = ""
		}
		h.write(t)
		return true
	case t.kind == tokStart && hidden[t.name] && !t.selfClosing:
		h.skip = t.name
		h.write(t)
		return true
	}
	nested := h.depth > 1
	switch {
	case t.kind == tokStart && t.name == "table" && !t.selfClosing:
		h.depth++
	case t.kind == tokEnd && t.name == "table":
		if h.depth--; h.depth == 0 {
			h.endRow()
			return false
		}
	}
	if nested || h.depth > 1 {
		// A nested table's cells are text of the outer one's cell.
		h.write(t)
		return true
	}
	switch {
	case t.kind == tokStart && t.name == "tr":
		h.endRow()
		h.trAl = t.attr("align")
	case t.kind == tokEnd && t.name == "tr":
		h.endRow()
	case t.kind == tokStart && (t.name == "td" || t.name == "th"):
		h.endCell()
		al := t.attr("align")
		if al == "" {
			al = h.trAl
		}
		h.cell = &stage.Node{Kind: stage.KindTableCell}
		if al = strings.ToLower(al); al == "left" || al == "center" || al == "right" {
			h.cell.Attrs = map[string]string{"align": al}
		}
		if t.name == "th" {
			h.ths++
			// Bold in a row that is not a header row, as the themes' th.
			h.src.WriteString("<b>")
		}
	case t.kind == tokEnd && (t.name == "td" || t.name == "th"):
		h.endCell()
	case t.kind == tokStart && (t.name == "thead" || t.name == "tbody" || t.name == "tfoot"):
		h.endRow()
		h.group, h.rows = t.name, 0
	case t.kind == tokEnd && (t.name == "thead" || t.name == "tbody" || t.name == "tfoot"):
		h.endRow()
		// Rows after it are in a tbody of their own.
		h.group, h.rows = "", 0
	default:
		h.write(t)
	}
	return true
}

// write adds a token to the cell's HTML, or to the stray content outside
// the cells. Block elements inside a cell break its line, once between
// two pieces of content, as they stack boxes in a browser.
func (h *htmlTable) write(t *token) {
	if h.cell == nil {
		h.stray = append(h.stray, t)
		return
	}
	switch t.kind {
	case tokText:
		if strings.TrimSpace(t.text) == "" {
			h.src.WriteString(" ")
			return
		}
		h.content()
		h.src.WriteString(html.EscapeString(t.text))
	case tokStart:
		if blockTags[t.name] || t.name == "td" || t.name == "th" {
			h.brk = h.wrote
			return
		}
		if t.name == "img" || t.name == "br" {
			h.content()
		}
		h.src.WriteString("<" + t.name)
		for _, a := range t.attrs {
			h.src.WriteString(" " + a.key + `="` + html.EscapeString(a.val) + `"`)
		}
		if t.selfClosing {
			h.src.WriteString("/")
		}
		h.src.WriteString(">")
	case tokEnd:
		if blockTags[t.name] || t.name == "td" || t.name == "th" {
			h.brk = h.wrote
			return
		}
		h.src.WriteString("</" + t.name + ">")
	}
}

// content writes the line break a block boundary before it asks for.
func (h *htmlTable) content() {
	if h.brk {
		h.src.WriteString("<br>")
		h.brk = false
	}
	h.wrote = true
}

func (h *htmlTable) endCell() {
	if h.cell == nil {
		return
	}
	if s := h.src.String(); s != "" {
		h.cell.Children = []*stage.Node{{Kind: stage.KindRawHTML, Text: s}}
	}
	h.row = append(h.row, h.cell)
	h.cell, h.wrote, h.brk = nil, false, false
	h.src.Reset()
}

func (h *htmlTable) endRow() {
	h.endCell()
	if len(h.row) == 0 {
		return
	}
	row := &stage.Node{Kind: stage.KindTableRow, Children: h.row}
	// Counted in its row group, as nth-child counts: a leading row of
	// <th> cells outside a <thead> is the first of its tbody, and each
	// tbody starts again.
	if h.group != "thead" && h.group != "tfoot" {
		if h.rows++; h.rows%2 == 0 {
			row.Attrs = map[string]string{stripeAttr: "true"}
		}
	}
	// The leading rows of <th> cells are the header, shaded and repeated
	// on each page the table continues on.
	if h.ths == len(h.row) && len(h.body) == 0 {
		if h.head == nil {
			h.head = &stage.Node{Kind: stage.KindTableHead}
		}
		h.head.Children = append(h.head.Children, row)
	} else {
		h.body = append(h.body, row)
	}
	h.row, h.ths, h.trAl = nil, 0, ""
}

// node is the table collected.
func (h *htmlTable) node() *stage.Node {
	n := &stage.Node{Kind: stage.KindTable, Attrs: map[string]string{stripeAttr: "rows"}}
	if h.head != nil {
		n.Children = append(n.Children, h.head)
	}
	n.Children = append(n.Children, h.body...)
	return n
}

// leadsWithTable reports whether an HTML block starts with a <table> that
// htmlBlock lays out as a table, maybe inside elements that draw nothing
// of their own (<div align="center">).
func leadsWithTable(src string) bool {
	if !containsFold(src, "<table") || !tablesClosed(src) {
		return false
	}
	decided, leads := false, false
	tokenize(src, func(t *token) {
		switch {
		case decided, t.kind == tokText && strings.TrimSpace(t.text) == "":
		case t.kind == tokStart && t.name == "table" && !t.selfClosing:
			decided, leads = true, true
		case t.kind != tokText && blockTags[t.name] && t.name != "hr" && t.name != "pre" && t.name != "li" && t.name != "table":
		default:
			decided = true
		}
	})
	return leads
}

// tablesClosed reports whether every <table> src opens is closed in src:
// only then are its cells all there to be laid out as a table.
func tablesClosed(src string) bool {
	depth, skip := 0, ""
	tokenize(src, func(t *token) {
		switch {
		case skip != "":
			if t.kind == tokEnd && t.name == skip {
				skip = ""
			}
		case t.kind == tokStart && hidden[t.name] && !t.selfClosing:
			skip = t.name
		case t.kind == tokStart && t.name == "table" && !t.selfClosing:
			depth++
		case t.kind == tokEnd && t.name == "table" && depth > 0:
			depth--
		}
	})
	return depth == 0
}
