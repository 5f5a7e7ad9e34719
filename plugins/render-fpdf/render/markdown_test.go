package render

import (
	"strconv"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/mdpress/mdpress/sdk/stage"
)

// markdownDoc parses GFM with goldmark into the stage tree, following the
// Kind and Attrs conventions of sdk/stage/node.go. It stands in for the
// parse stage, which a plugin cannot import.
func markdownDoc(t testing.TB, src string) stage.Document {
	t.Helper()
	md := goldmark.New(
		goldmark.WithExtensions(extension.GFM, extension.Footnote),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
	)
	b := []byte(src)
	root := md.Parser().Parse(text.NewReader(b))
	c := &mdConverter{src: b}
	doc := &stage.Node{Kind: stage.KindDocument}
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		c.block(doc, n)
	}
	title := ""
	doc.Walk(func(n *stage.Node) bool {
		if n.Kind == stage.KindHeading && title == "" {
			title = strings.TrimSpace(n.PlainText())
		}
		return title == ""
	})
	return stage.Document{Root: doc, Title: title}
}

type mdConverter struct{ src []byte }

func add(parent *stage.Node, kind stage.Kind, attrs ...string) *stage.Node {
	n := &stage.Node{Kind: kind}
	if len(attrs) > 0 {
		n.Attrs = map[string]string{}
		for i := 0; i+1 < len(attrs); i += 2 {
			n.Attrs[attrs[i]] = attrs[i+1]
		}
	}
	parent.Children = append(parent.Children, n)
	return n
}

func (c *mdConverter) lines(n ast.Node) string {
	var b strings.Builder
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		b.Write(seg.Value(c.src))
	}
	return b.String()
}

func (c *mdConverter) block(parent *stage.Node, n ast.Node) {
	switch n := n.(type) {
	case *ast.Heading:
		id, _ := n.AttributeString("id")
		idb, _ := id.([]byte)
		c.inlines(add(parent, stage.KindHeading, "level", strconv.Itoa(n.Level), "id", string(idb)), n)
	case *ast.Paragraph, *ast.TextBlock:
		c.inlines(add(parent, stage.KindParagraph), n)
	case *ast.FencedCodeBlock:
		add(parent, stage.KindCodeBlock, "lang", string(n.Language(c.src))).Text = c.lines(n)
	case *ast.CodeBlock:
		add(parent, stage.KindCodeBlock).Text = c.lines(n)
	case *ast.HTMLBlock:
		s := c.lines(n)
		if n.HasClosure() {
			s += string(n.ClosureLine.Value(c.src))
		}
		add(parent, stage.KindHTMLBlock).Text = s
	case *ast.ThematicBreak:
		add(parent, stage.KindThematicBreak)
	case *ast.Blockquote:
		c.blocks(add(parent, stage.KindBlockquote), n)
	case *ast.List:
		l := add(parent, stage.KindList)
		l.Attrs = map[string]string{}
		if n.IsOrdered() {
			l.Attrs["ordered"], l.Attrs["start"] = "true", strconv.Itoa(n.Start)
		}
		if n.IsTight {
			l.Attrs["tight"] = "true"
		}
		c.blocks(l, n)
	case *ast.ListItem:
		item := add(parent, stage.KindListItem)
		if first := n.FirstChild(); first != nil {
			if box, ok := first.FirstChild().(*east.TaskCheckBox); ok {
				item.Attrs = map[string]string{"task": "true"}
				if box.IsChecked {
					item.Attrs["checked"] = "true"
				}
			}
		}
		c.blocks(item, n)
	case *east.Table:
		tbl := add(parent, stage.KindTable)
		for row := n.FirstChild(); row != nil; row = row.NextSibling() {
			kind := stage.KindTableRow
			if row.Kind() == east.KindTableHeader {
				kind = stage.KindTableHead
			}
			r := add(tbl, kind)
			for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
				a := ""
				if al := cell.(*east.TableCell).Alignment; al != east.AlignNone {
					a = al.String()
				}
				c.inlines(add(r, stage.KindTableCell, "align", a), cell)
			}
		}
	case *east.FootnoteList:
		c.blocks(add(parent, stage.KindFootnotes), n)
	case *east.Footnote:
		i := strconv.Itoa(n.Index)
		c.blocks(add(parent, stage.KindFootnote, "index", i, "id", "fn:"+i), n)
	default:
		c.blocks(parent, n)
	}
}

func (c *mdConverter) blocks(parent *stage.Node, n ast.Node) {
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		c.block(parent, ch)
	}
}

func (c *mdConverter) inlines(parent *stage.Node, n ast.Node) {
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		c.inline(parent, ch)
	}
}

func decode(b []byte) string {
	return string(util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(b))))
}

func (c *mdConverter) inline(parent *stage.Node, n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Segment.Value(c.src)
		s := string(v)
		if !n.IsRaw() {
			s = decode(v)
		}
		add(parent, stage.KindText).Text = s
		if n.HardLineBreak() {
			add(parent, stage.KindHardBreak)
		} else if n.SoftLineBreak() {
			add(parent, stage.KindSoftBreak)
		}
	case *ast.String:
		add(parent, stage.KindText).Text = string(n.Value)
	case *ast.CodeSpan:
		var b strings.Builder
		for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
			if t, ok := ch.(*ast.Text); ok {
				b.WriteString(strings.ReplaceAll(string(t.Segment.Value(c.src)), "\n", " "))
			}
		}
		add(parent, stage.KindCodeSpan).Text = b.String()
	case *ast.Emphasis:
		kind := stage.KindEmphasis
		if n.Level >= 2 {
			kind = stage.KindStrong
		}
		c.inlines(add(parent, kind), n)
	case *east.Strikethrough:
		c.inlines(add(parent, stage.KindStrikethrough), n)
	case *ast.Link:
		c.inlines(add(parent, stage.KindLink, "href", string(n.Destination), "title", string(n.Title)), n)
	case *ast.AutoLink:
		href := string(n.URL(c.src))
		if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(href, "mailto:") {
			href = "mailto:" + href
		}
		add(add(parent, stage.KindLink, "href", href), stage.KindText).Text = string(n.Label(c.src))
	case *ast.Image:
		img := add(parent, stage.KindImage, "src", string(n.Destination), "title", string(n.Title))
		c.inlines(img, n)
		img.Attrs["alt"] = img.PlainText()
	case *ast.RawHTML:
		var b strings.Builder
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			b.Write(seg.Value(c.src))
		}
		add(parent, stage.KindRawHTML).Text = b.String()
	case *east.FootnoteLink:
		i := strconv.Itoa(n.Index)
		add(parent, stage.KindFootnoteRef, "index", i, "id", "fn:"+i)
	case *east.TaskCheckBox, *east.FootnoteBacklink:
	default:
		c.inlines(parent, n)
	}
}
