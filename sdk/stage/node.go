package stage

// Kind names a node of the document tree.
type Kind string

// Block kinds.
const (
	KindDocument      Kind = "document"
	KindHeading       Kind = "heading" // Attrs: level ("1".."6"), id
	KindParagraph     Kind = "paragraph"
	KindBlockquote    Kind = "blockquote" // Attrs: alert for one of GitHub's alerts (see Node)
	KindList          Kind = "list"       // Attrs: ordered ("true"), start ("1"), tight ("true")
	KindListItem      Kind = "list_item"  // Attrs: task ("true"), checked ("true") for task items
	KindCodeBlock     Kind = "code_block" // Text: the code; Attrs: lang
	KindHTMLBlock     Kind = "html_block" // Text: raw HTML
	KindThematicBreak Kind = "thematic_break"
	KindTable         Kind = "table"      // children: one table_head, then table_rows
	KindTableHead     Kind = "table_head" // children: table_cells
	KindTableRow      Kind = "table_row"
	KindTableCell     Kind = "table_cell" // Attrs: align ("left", "center", "right"; absent when not aligned)
	KindFootnotes     Kind = "footnotes"  // children: footnote
	KindFootnote      Kind = "footnote"   // Attrs: index ("1"), id
)

// Inline kinds.
const (
	KindText          Kind = "text" // Text
	KindSoftBreak     Kind = "soft_break"
	KindHardBreak     Kind = "hard_break"
	KindEmphasis      Kind = "emphasis" // italic
	KindStrong        Kind = "strong"
	KindStrikethrough Kind = "strikethrough"
	KindCodeSpan      Kind = "code_span"    // Text
	KindLink          Kind = "link"         // Attrs: href, title
	KindImage         Kind = "image"        // Attrs: src, title, alt (alt text also as children)
	KindRawHTML       Kind = "raw_html"     // Text: an inline HTML tag or fragment
	KindFootnoteRef   Kind = "footnote_ref" // Attrs: index ("1"), id
)

// Node is one node of the backend-neutral document tree. Raw HTML stays raw
// (KindHTMLBlock, KindRawHTML) for backends to interpret or drop.
//
// One of GitHub's alerts (a quote that starts with "[!NOTE]" alone on its
// line) is a KindBlockquote with the attribute alert, "note", "tip",
// "important", "warning" or "caution", whose first child is a paragraph
// with the attribute alert_title ("true") that holds its title ("Note").
// A renderer that knows no alerts, or not that kind, lays it out as a
// quote that starts with its title.
//
// Math (GitHub's $...$, $$...$$ and ```math) keeps its TeX source as Text
// in nodes every renderer already draws: inline math is a KindCodeSpan
// with the attribute math "inline" ("display" for $$...$$ inside a
// paragraph), display math a KindCodeBlock with lang "math" and math
// "display". A renderer that knows no math prints the source as code.
// Math in a heading may also carry the attribute plain: the formula as
// plain text on one line ("e^(iπ)+1=0"), which the document's title and
// outline use and a renderer's bookmarks should too.
// A formula the parser converted also carries the attribute mathml: its
// MathML presentation markup, compact (a <math> element, display "block"
// or "inline", without the TeX annotation or browser-only attributes),
// for a renderer that lays formulas out itself; one without it is printed
// as source by every renderer, as on Chromium. A display formula numbered
// with \tag{1} also carries mathtag, the tag as printed ("(1)"), which the
// MathML does not hold: it goes at the right margin, on the formula's
// baseline, the formula staying centred. Tags of a table's rows (align
// numbered per row) are in the MathML, as MathML's <mlabeledtr> rows
// whose first cell is the tag, drawn likewise on the row's baseline; a
// table of width="100%" (multline) spans the line, each row's cell
// aligned by its columnalign.
type Node struct {
	Kind     Kind
	Text     string
	Attrs    map[string]string
	Children []*Node
}

// Attr returns the attribute or "".
func (n *Node) Attr(key string) string {
	if n == nil || n.Attrs == nil {
		return ""
	}
	return n.Attrs[key]
}

// Walk calls fn for n and its descendants in document order; fn returning
// false skips the node's children.
func (n *Node) Walk(fn func(*Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	for _, c := range n.Children {
		c.Walk(fn)
	}
}

// PlainText returns the text of n's subtree: the text of inline nodes as
// written, breaks as spaces, and one space between blocks, so words of
// adjacent paragraphs, cells or items never run together.
func (n *Node) PlainText() string {
	var b []byte
	space := func() {
		if len(b) > 0 && b[len(b)-1] != ' ' {
			b = append(b, ' ')
		}
	}
	n.Walk(func(m *Node) bool {
		switch m.Kind {
		case KindText, KindCodeSpan:
			b = append(b, m.Text...)
		case KindSoftBreak, KindHardBreak:
			b = append(b, ' ')
		case KindCodeBlock:
			space()
			b = append(b, m.Text...)
		default:
			if m.IsBlock() {
				space()
			}
		}
		return true
	})
	for len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return string(b)
}

// IsBlock reports whether n is a block node (as opposed to inline).
func (n *Node) IsBlock() bool {
	switch n.Kind {
	case KindDocument, KindHeading, KindParagraph, KindBlockquote, KindList, KindListItem, KindCodeBlock,
		KindHTMLBlock, KindThematicBreak, KindTable, KindTableHead, KindTableRow, KindTableCell,
		KindFootnotes, KindFootnote:
		return true
	}
	return false
}
