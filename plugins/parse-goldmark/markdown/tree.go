package markdown

import (
	"bytes"
	"context"
	"strconv"
	"strings"

	emast "github.com/yuin/goldmark-emoji/ast"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/util"

	"github.com/mdpress/mdpress/sdk/stage"
)

// blockReserve is how many levels under the deepest block container stay
// free for a leaf block's own structure (table, row, cell) and a few
// inline levels, so that nesting blocks deeply cannot starve the inlines.
const blockReserve = 8

// ctxEvery is how many visited nodes pass between two context checks.
const ctxEvery = 1024

// converter turns a goldmark AST into a stage.Node tree. Depth is bounded
// by maxDepth: a container that would sit too deep is replaced by its
// content, walked with an explicit stack so that no goldmark nesting can
// exhaust the goroutine stack. The converter's own recursion is bounded by
// maxDepth.
type converter struct {
	ctx      context.Context
	src      []byte
	maxDepth int
	maxNodes int
	nodes    int
	steps    int
	err      error
	dec      decoder
	// bytes counts the text and attribute bytes of the tree: a link
	// reference definition is copied into every link that uses it, so a
	// megabyte of destination used 300 times was 300 MB of tree from 1 MB
	// of Markdown.
	bytes, maxBytes int

	// open is the last text node created; its text grows in openBuf until
	// any other node is added, so that merging many adjacent pieces of text
	// stays linear.
	open    *stage.Node
	openBuf []byte
}

// convert returns the tree of the front matter fm, when not nil, and of
// doc, parsed from src.
func convert(ctx context.Context, fm *frontMatter, doc ast.Node, src []byte, cfg Config) (*stage.Node, error) {
	c := newConverter(ctx, cfg, len(src))
	root := &stage.Node{Kind: stage.KindDocument}
	if fm != nil {
		if err := c.frontMatter(root, fm); err != nil {
			return nil, err
		}
	}
	if err := c.document(root, doc, src); err != nil {
		return nil, err
	}
	return root, nil
}

// newConverter returns a converter for a document of size bytes. Its
// limits count across every call to document, so that a document parsed
// in parts is held to the limits of the whole.
func newConverter(ctx context.Context, cfg Config, size int) *converter {
	// nodes starts at 1 for the document node, however many parts hold it.
	return &converter{ctx: ctx, maxDepth: cfg.MaxDepth, maxNodes: cfg.MaxNodes, nodes: 1, maxBytes: outputBudget(size)}
}

// document converts the blocks of doc, parsed from src, into children of
// root.
func (c *converter) document(root *stage.Node, doc ast.Node, src []byte) error {
	c.src = src
	for n := doc.FirstChild(); n != nil && c.err == nil; n = n.NextSibling() {
		c.block(root, 0, n)
	}
	c.flush()
	return c.err
}

// step counts a visited node and checks the context now and then.
func (c *converter) step() bool {
	if c.err != nil {
		return false
	}
	if c.steps++; c.steps%ctxEvery == 0 {
		if err := c.ctx.Err(); err != nil {
			c.err = ctxError(err)
			return false
		}
	}
	return true
}

// outputBudget bounds the bytes a document of n bytes may produce, as tree
// text and attributes and as HTML: a few times its size (percent-encoding
// triples a destination, HTML escaping grows quotes sixfold), and never
// less than 8 MiB for small documents that reuse a long link.
func outputBudget(n int) int { return max(8<<20, 6*n) }

// errTooMuchOutput is what a document that would produce more than its
// output budget fails with.
func errTooMuchOutput(budget int) error {
	return &stage.Error{
		Code:    stage.CodeTooLarge,
		Message: "document too large once expanded: it would make more than " + strconv.Itoa(budget>>20) + " MiB of text and HTML (links reusing long definitions, or very many small elements)",
		Details: map[string]string{"limit": strconv.Itoa(budget>>20) + " MiB of output"},
	}
}

// charge counts n bytes of output against the budget.
func (c *converter) charge(n int) {
	if c.bytes += n; c.bytes > c.maxBytes && c.err == nil {
		c.err = errTooMuchOutput(c.maxBytes)
	}
}

// add appends child to parent and returns it.
func (c *converter) add(parent, child *stage.Node) *stage.Node {
	c.flush()
	if c.nodes++; c.nodes > c.maxNodes && c.err == nil {
		c.err = &stage.Error{
			Code:    stage.CodeTooLarge,
			Message: "document too complex: more than " + strconv.Itoa(c.maxNodes) + " elements",
			Details: map[string]string{"limit": strconv.Itoa(c.maxNodes)},
		}
	}
	parent.Children = append(parent.Children, child)
	return child
}

// text appends s to parent, merged into the last child when that is text.
func (c *converter) text(parent *stage.Node, s string) {
	if s == "" {
		return
	}
	c.charge(len(s))
	if c.open != nil && len(parent.Children) > 0 && parent.Children[len(parent.Children)-1] == c.open {
		c.openBuf = append(c.openBuf, s...)
		return
	}
	t := c.add(parent, &stage.Node{Kind: stage.KindText})
	c.open, c.openBuf = t, append(c.openBuf[:0], s...)
}

func (c *converter) flush() {
	if c.open != nil {
		c.open.Text = string(c.openBuf)
		c.open = nil
	}
}

func (c *converter) blockLimit() int { return c.maxDepth - blockReserve }

// block converts the block n into children of parent, which sits at depth d.
func (c *converter) block(parent *stage.Node, d int, n ast.Node) {
	if !c.step() {
		return
	}
	switch n := n.(type) {
	case *ast.Heading:
		h := c.add(parent, &stage.Node{Kind: stage.KindHeading, Attrs: map[string]string{
			"level": strconv.Itoa(n.Level),
			"id":    attrString(n, "id"),
		}})
		c.inlines(h, d+1, n)
	case *ast.Paragraph, *ast.TextBlock:
		p := c.add(parent, &stage.Node{Kind: stage.KindParagraph})
		c.inlines(p, d+1, n)
	case *ast.FencedCodeBlock:
		cb := &stage.Node{Kind: stage.KindCodeBlock, Text: c.lines(n)}
		if lang := n.Language(c.src); lang != nil {
			cb.Attrs = map[string]string{"lang": c.dec.decode(lang)}
		}
		c.add(parent, cb)
	case *ast.CodeBlock:
		c.add(parent, &stage.Node{Kind: stage.KindCodeBlock, Text: c.lines(n)})
	case *mathBlock:
		tex := mathTeX(n, c.src)
		attrs := map[string]string{"lang": "math", "math": "display"}
		c.mathML(attrs, n.conv.convert(tex, true, budgetOf(n)))
		c.add(parent, &stage.Node{Kind: stage.KindCodeBlock, Text: string(tex), Attrs: attrs})
	case *ast.HTMLBlock:
		text := c.lines(n)
		if n.HasClosure() {
			text += string(n.ClosureLine.Value(c.src))
		}
		c.add(parent, &stage.Node{Kind: stage.KindHTMLBlock, Text: text})
	case *ast.ThematicBreak:
		c.add(parent, &stage.Node{Kind: stage.KindThematicBreak})
	case *east.Table:
		c.table(parent, d, n)
	case *ast.Blockquote, *ast.List, *ast.ListItem, *east.FootnoteList, *east.Footnote:
		c.container(parent, d, n)
	default:
		// Kinds no enabled extension produces: keep their content.
		for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
			c.block(parent, d, ch)
		}
	}
}

// container converts a block that holds blocks, or flattens it into parent
// when it would sit deeper than the block limit. A list and a footnote list
// need two levels, so that their items never land under another kind.
func (c *converter) container(parent *stage.Node, d int, n ast.Node) {
	need := 1
	if n.Kind() == ast.KindList || n.Kind() == east.KindFootnoteList {
		need = 2
	}
	if d+need > c.blockLimit() {
		c.flattenBlocks(parent, d, n)
		return
	}
	node := &stage.Node{}
	switch n := n.(type) {
	case *ast.Blockquote:
		node.Kind = stage.KindBlockquote
		if kind, ok := alertOf(n); ok {
			node.Attrs = map[string]string{"alert": kind.name}
		}
	case *ast.List:
		node.Kind = stage.KindList
		if n.IsOrdered() {
			node.Attrs = map[string]string{"ordered": "true", "start": strconv.Itoa(n.Start)}
		}
		if n.IsTight {
			node.Attrs = setAttr(node.Attrs, "tight", "true")
		}
	case *ast.ListItem:
		node.Kind = stage.KindListItem
		if box := taskCheckBox(n); box != nil {
			node.Attrs = map[string]string{"task": "true"}
			if box.IsChecked {
				node.Attrs["checked"] = "true"
			}
		}
	case *east.FootnoteList:
		node.Kind = stage.KindFootnotes
	case *east.Footnote:
		index := strconv.Itoa(n.Index)
		node.Kind = stage.KindFootnote
		node.Attrs = map[string]string{"index": index, "id": footnoteID(index)}
	}
	c.add(parent, node)
	if kind, ok := alertOf(n); ok {
		// The title opens the alert, as in the HTML (see alerts.go).
		title := c.add(node, &stage.Node{Kind: stage.KindParagraph, Attrs: map[string]string{"alert_title": "true"}})
		c.text(title, kind.title)
	}
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		c.block(node, d+1, ch)
	}
}

// flattenBlocks appends the leaf blocks under n to parent in document
// order, dropping every container on the way.
func (c *converter) flattenBlocks(parent *stage.Node, d int, n ast.Node) {
	stack := []ast.Node{n}
	for len(stack) > 0 && c.step() {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch n.Kind() {
		case ast.KindBlockquote, ast.KindList, ast.KindListItem, east.KindFootnoteList, east.KindFootnote:
			stack = pushChildren(stack, n)
		default:
			c.block(parent, d, n)
		}
	}
}

func (c *converter) table(parent *stage.Node, d int, n *east.Table) {
	t := c.add(parent, &stage.Node{Kind: stage.KindTable})
	for row := n.FirstChild(); row != nil && c.step(); row = row.NextSibling() {
		kind := stage.KindTableRow
		if row.Kind() == east.KindTableHeader {
			kind = stage.KindTableHead
		}
		r := c.add(t, &stage.Node{Kind: kind})
		col := 0
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			align := east.AlignNone
			if col < len(n.Alignments) {
				align = n.Alignments[col]
			} else if tc, ok := cell.(*east.TableCell); ok {
				align = tc.Alignment
			}
			tc := c.add(r, &stage.Node{Kind: stage.KindTableCell})
			if align != east.AlignNone {
				// A cell without alignment has no attribute map: one per
				// cell was a tenth of a table-heavy document's parse.
				tc.Attrs = map[string]string{"align": align.String()}
			}
			c.inlines(tc, d+3, cell)
			col++
		}
	}
}

// inlines converts the inline children of n into children of parent, which
// sits at depth d.
func (c *converter) inlines(parent *stage.Node, d int, n ast.Node) {
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		c.inline(parent, d, ch)
	}
}

// inline converts the inline n into children of parent, which sits at
// depth d. Containers are created only while their children still fit
// under maxDepth; deeper ones are flattened.
func (c *converter) inline(parent *stage.Node, d int, n ast.Node) {
	if !c.step() {
		return
	}
	room := d+2 <= c.maxDepth
	switch n := n.(type) {
	case *ast.Text:
		v := n.Segment.Value(c.src)
		if n.IsRaw() {
			c.text(parent, string(v))
		} else {
			c.text(parent, c.dec.decode(v))
		}
		switch {
		case n.HardLineBreak():
			c.add(parent, &stage.Node{Kind: stage.KindHardBreak})
		case n.SoftLineBreak():
			c.add(parent, &stage.Node{Kind: stage.KindSoftBreak})
		}
	case *ast.String:
		if n.IsCode() || n.IsRaw() {
			c.text(parent, string(n.Value))
		} else {
			c.text(parent, c.dec.decode(n.Value))
		}
	case *ast.CodeSpan:
		c.add(parent, &stage.Node{Kind: stage.KindCodeSpan, Text: c.codeSpan(n)})
	case *emast.Emoji:
		// GitHub's own images (:octocat:) have no character: they stay
		// the shortcode, as the HTML renderer leaves them.
		if n.Value.IsUnicode() {
			c.text(parent, string(n.Value.Unicode))
		} else {
			c.text(parent, ":"+string(n.ShortName)+":")
		}
	case *mathInline:
		style := "inline"
		if n.display {
			style = "display"
		}
		attrs := map[string]string{"math": style}
		c.mathML(attrs, n.conv.convert(n.tex, n.display, budgetOf(n)))
		c.add(parent, &stage.Node{Kind: stage.KindCodeSpan, Text: string(n.tex), Attrs: attrs})
	case *ast.RawHTML:
		var b []byte
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			b = append(b, seg.Value(c.src)...)
		}
		c.add(parent, &stage.Node{Kind: stage.KindRawHTML, Text: string(b)})
	case *ast.AutoLink:
		label := string(n.Label(c.src))
		if !room {
			c.text(parent, label)
			return
		}
		href := util.URLEscape(n.URL(c.src), false)
		if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(href), []byte("mailto:")) {
			href = append([]byte("mailto:"), href...)
		}
		l := c.add(parent, &stage.Node{Kind: stage.KindLink, Attrs: map[string]string{"href": string(href)}})
		c.text(l, label)
	case *east.FootnoteLink:
		index := strconv.Itoa(n.Index)
		c.add(parent, &stage.Node{Kind: stage.KindFootnoteRef, Attrs: map[string]string{"index": index, "id": footnoteID(index)}})
	case *east.TaskCheckBox, *east.FootnoteBacklink:
		// The box is an attribute of its list item; the backlink only
		// makes sense in HTML.
	case *ast.Emphasis, *east.Strikethrough, *ast.Link, *ast.Image:
		if !room {
			c.flattenInlines(parent, d, n)
			return
		}
		c.inlineContainer(parent, d, n)
	default:
		c.inlines(parent, d, n)
	}
}

func (c *converter) inlineContainer(parent *stage.Node, d int, n ast.Node) {
	node := &stage.Node{}
	switch n := n.(type) {
	case *ast.Emphasis:
		node.Kind = stage.KindEmphasis
		if n.Level >= 2 {
			node.Kind = stage.KindStrong
		}
	case *east.Strikethrough:
		node.Kind = stage.KindStrikethrough
	case *ast.Link:
		node.Kind = stage.KindLink
		node.Attrs = map[string]string{"href": string(util.URLEscape(n.Destination, true))}
		if n.Title != nil {
			node.Attrs["title"] = c.dec.decode(n.Title)
		}
	case *ast.Image:
		node.Kind = stage.KindImage
		node.Attrs = map[string]string{"src": string(util.URLEscape(n.Destination, true))}
		if n.Title != nil {
			node.Attrs["title"] = c.dec.decode(n.Title)
		}
	}
	for _, v := range node.Attrs {
		c.charge(len(v))
	}
	if c.err != nil {
		return
	}
	c.add(parent, node)
	c.inlines(node, d+1, n)
	if node.Kind == stage.KindImage {
		c.flush()
		// Images nested in alt text would copy it once per level.
		alt := node.PlainText()
		if len(alt) > maxAlt {
			alt = strings.ToValidUTF8(alt[:maxAlt], "")
		}
		c.charge(len(alt))
		node.Attrs["alt"] = alt
	}
}

// maxAlt bounds an image's alt text, which is its content as plain text.
const maxAlt = 4 << 10

// flattenInlines appends the leaf inlines under n to parent in document
// order, dropping every container on the way.
func (c *converter) flattenInlines(parent *stage.Node, d int, n ast.Node) {
	stack := []ast.Node{n}
	for len(stack) > 0 && c.step() {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch n.(type) {
		case *ast.Emphasis, *east.Strikethrough, *ast.Link, *ast.Image:
			stack = pushChildren(stack, n)
		default:
			c.inline(parent, d, n)
		}
	}
}

// pushChildren pushes n's children so that the first is popped first.
func pushChildren(stack []ast.Node, n ast.Node) []ast.Node {
	at := len(stack)
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		stack = append(stack, ch)
	}
	for i, j := at, len(stack)-1; i < j; i, j = i+1, j-1 {
		stack[i], stack[j] = stack[j], stack[i]
	}
	return stack
}

func (c *converter) codeSpan(n *ast.CodeSpan) string {
	var b []byte
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		t, ok := ch.(*ast.Text)
		if !ok {
			continue
		}
		v := t.Segment.Value(c.src)
		if len(v) > 0 && v[len(v)-1] == '\n' {
			b = append(append(b, v[:len(v)-1]...), ' ')
		} else {
			b = append(b, v...)
		}
	}
	return string(b)
}

// lines is the raw text of a block's lines (code, raw HTML).
func (c *converter) lines(n ast.Node) string {
	var b []byte
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b = append(b, seg.Value(c.src)...)
	}
	return string(b)
}

// taskCheckBox returns the check box that opens a list item, if any.
func taskCheckBox(item *ast.ListItem) *east.TaskCheckBox {
	if first := item.FirstChild(); first != nil {
		box, _ := first.FirstChild().(*east.TaskCheckBox)
		return box
	}
	return nil
}

// footnoteID is the id goldmark gives footnote number index in the HTML
// (without an id prefix); a footnote_ref carries the id of its target.
func footnoteID(index string) string { return "fn:" + index }

func attrString(n ast.Node, name string) string {
	v, ok := n.AttributeString(name)
	if !ok {
		return ""
	}
	switch v := v.(type) {
	case []byte:
		return string(v)
	case string:
		return v
	}
	return ""
}

func setAttr(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// mathML adds a converted formula's compact MathML, and its tag, to a math node's
// attributes, counted against the tree's output budget.
func (c *converter) mathML(attrs map[string]string, conv *mathConv) {
	if conv.ok {
		attrs["mathml"] = conv.tree
		c.charge(len(conv.tree))
		if conv.tag != "" {
			attrs["mathtag"] = conv.tag
			c.charge(len(conv.tag))
		}
	}
}
