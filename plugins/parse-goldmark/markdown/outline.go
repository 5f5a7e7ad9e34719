package markdown

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/mdpress/mdpress/sdk/stage"
)

// outline lists every heading of the tree, and the title: the text of the
// first heading, or "". A heading's formulas are in their plain form
// (see plainMath).
func outline(root *stage.Node) (title string, headings []stage.Heading) {
	plainMath(root)
	root.Walk(func(n *stage.Node) bool {
		if n.Kind != stage.KindHeading {
			return true
		}
		level, _ := strconv.Atoi(n.Attr("level"))
		headings = append(headings, stage.Heading{Level: level, Text: headingText(n), ID: n.Attr("id")})
		return false
	})
	if len(headings) > 0 {
		title = headings[0].Text
	}
	return title, headings
}

// headingText is the heading's plain text with whitespace collapsed.
// Images are left out when there is other text, because READMEs put badges
// in their first heading ("errors [![build](...)]"), and the alt text of a
// badge makes a poor document title.
func headingText(h *stage.Node) string {
	var b strings.Builder
	var alts strings.Builder
	var walk func(n *stage.Node, inImage bool)
	walk = func(n *stage.Node, inImage bool) {
		out := &b
		if inImage {
			out = &alts
		}
		switch n.Kind {
		case stage.KindText:
			out.WriteString(n.Text)
		case stage.KindCodeSpan:
			if p := n.Attr("plain"); p != "" {
				out.WriteString(p)
			} else {
				out.WriteString(n.Text)
			}
		case stage.KindSoftBreak, stage.KindHardBreak:
			out.WriteByte(' ')
		case stage.KindImage:
			inImage = true
			alts.WriteByte(' ')
		}
		for _, c := range n.Children {
			walk(c, inImage)
		}
	}
	walk(h, false)
	if text := oneLine(b.String()); text != "" {
		return text
	}
	return oneLine(alts.String())
}

// oneLine is s as a title or a bookmark holds it: its white space
// collapsed and each control character (C0, DEL, C1) made a space. Viewers,
// file managers and tools (pdfinfo in a terminal) show a PDF's title as it
// is: a heading's ESC, or front matter's "\e[2J" or "\0", reached
// render-fpdf's /Title as an escape sequence or a NUL, where Chromium,
// reading the <title>, made them spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)), " ")
}
