package markdown

import (
	"fmt"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// dirAuto gives the HTML's blocks dir="auto", as GitHub renders Markdown,
// so that a block whose first strong character is Hebrew or Arabic reads
// right to left and starts at the right, and an English one is unchanged.
// Paragraphs, headings, lists and quotes carry it; code blocks do not.
//
// A paragraph or heading directly inside a list item or quote does not:
// a browser resolves a dir="auto" element from the text of its
// descendants that carry no dir of their own, so a list or quote of
// paragraphs each with dir="auto" would find no text and stay left to
// right, with its bullets and bar on the left of right-to-left text. They
// follow their list or quote instead, which takes the direction of its
// first strong character. (GitHub leaves quotes without dir, so its bar
// stays on the left; the themes' logical sides want it beside the text.)
//
// render-fpdf resolves each block's direction by these same rules from the
// document tree, which therefore carries no direction of its own.
type dirAuto struct{}

func (dirAuto) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindParagraph, renderParagraph)
	reg.Register(ast.KindHeading, renderHeading)
	reg.Register(ast.KindList, renderList)
	reg.Register(ast.KindBlockquote, renderBlockquote)
}

// followsContainer reports whether n takes its direction from the list
// item or quote it sits in.
func followsContainer(n ast.Node) bool {
	switch n.Parent().(type) {
	case *ast.ListItem, *ast.Blockquote:
		return true
	}
	return false
}

func renderParagraph(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		_, _ = w.WriteString("</p>\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<p")
	if n.Attributes() != nil {
		html.RenderAttributes(w, n, html.ParagraphAttributeFilter)
	}
	if !followsContainer(n) {
		_, _ = w.WriteString(` dir="auto"`)
	}
	_ = w.WriteByte('>')
	return ast.WalkContinue, nil
}

func renderHeading(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Heading)
	level := "0123456"[min(max(n.Level, 0), 6)]
	if !entering {
		_, _ = w.WriteString("</h")
		_ = w.WriteByte(level)
		_, _ = w.WriteString(">\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<h")
	_ = w.WriteByte(level)
	if n.Attributes() != nil {
		html.RenderAttributes(w, n, html.HeadingAttributeFilter)
	}
	if !followsContainer(n) {
		_, _ = w.WriteString(` dir="auto"`)
	}
	_ = w.WriteByte('>')
	return ast.WalkContinue, nil
}

func renderList(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.List)
	tag := "ul"
	if n.IsOrdered() {
		tag = "ol"
	}
	if !entering {
		_, _ = w.WriteString("</")
		_, _ = w.WriteString(tag)
		_, _ = w.WriteString(">\n")
		return ast.WalkContinue, nil
	}
	_ = w.WriteByte('<')
	_, _ = w.WriteString(tag)
	if n.IsOrdered() && n.Start != 1 {
		_, _ = fmt.Fprintf(w, " start=\"%d\"", n.Start)
	}
	if n.Attributes() != nil {
		html.RenderAttributes(w, n, html.ListAttributeFilter)
	}
	_, _ = w.WriteString(` dir="auto">` + "\n")
	return ast.WalkContinue, nil
}

func renderBlockquote(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if kind, ok := alertOf(n); ok {
		renderAlert(w, kind, entering)
		return ast.WalkContinue, nil
	}
	if !entering {
		_, _ = w.WriteString("</blockquote>\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<blockquote")
	if n.Attributes() != nil {
		html.RenderAttributes(w, n, html.BlockquoteAttributeFilter)
	}
	_, _ = w.WriteString(` dir="auto">` + "\n")
	return ast.WalkContinue, nil
}

// renderAlert writes an alert as GitHub does. Its title carries a
// dir="auto" of its own, as on GitHub, so that the alert's direction comes
// from its content, not from the English title word.
func renderAlert(w util.BufWriter, kind alertKind, entering bool) {
	if !entering {
		_, _ = w.WriteString("</div>\n")
		return
	}
	_, _ = w.WriteString(`<div class="markdown-alert markdown-alert-`)
	_, _ = w.WriteString(kind.name)
	_, _ = w.WriteString(`" dir="auto">` + "\n" + `<p class="markdown-alert-title" dir="auto">`)
	_, _ = w.WriteString(kind.icon)
	_, _ = w.WriteString(kind.title)
	_, _ = w.WriteString("</p>\n")
}

var _ renderer.NodeRenderer = dirAuto{}
