package layout

import "github.com/mdpress/mdpress/sdk/stage"

// The parser gives the HTML's paragraphs, headings, lists and quotes
// dir="auto", as GitHub renders Markdown, except the paragraphs and
// headings directly inside a list item or quote, which follow their
// container (see parse-goldmark). The Chromium backend then lays a block
// whose first strong character is Hebrew or Arabic out right to left,
// right-aligned, with its bullets, check boxes and quote bar on the right.
// The tree carries no direction, so this backend applies the same rules
// to it: a block that decides its own direction looks for its first
// strong character (rules P2 and P3 of UAX #9; none: left to right), and
// everything inside a list or quote takes the list's or quote's.

// firstStrong returns bR when the first strong character of the text of
// ns is right to left, bL when it is left to right, bN when there is none.
// Like a browser resolving dir="auto", it skips what has a direction of
// its own (nested lists and quotes) and what is not text (an image's alt,
// raw HTML).
func firstStrong(ns []*stage.Node) bidiClass {
	stack := make([]*stage.Node, 0, 8)
	for i := len(ns) - 1; i >= 0; i-- {
		stack = append(stack, ns[i])
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == nil {
			continue
		}
		switch n.Kind {
		case stage.KindText, stage.KindCodeSpan, stage.KindCodeBlock:
			if c := strongOf(n.Text); c != bN {
				return c
			}
			continue
		case stage.KindList, stage.KindBlockquote, stage.KindImage, stage.KindHTMLBlock, stage.KindRawHTML,
			stage.KindFootnoteRef:
			continue
		}
		for i := len(n.Children) - 1; i >= 0; i-- {
			stack = append(stack, n.Children[i])
		}
	}
	return bN
}

// strongOf returns the class of the first strong character of s, or bN.
// ASCII letters settle it at once, so Latin text costs a byte or two.
func strongOf(s string) bidiClass {
	for _, r := range s {
		if r < 0x80 {
			if 'a' <= r|0x20 && r|0x20 <= 'z' {
				return bL
			}
			continue
		}
		switch classOf(r) {
		case bL:
			return bL
		case bR:
			return bR
		}
	}
	return bN
}

// The setters below are paired with a deferred restore of the fields they
// change, rather than returning a closure to defer, which would cost an
// allocation per paragraph.

// ownDirection sets the direction of a block that decides its own (a
// paragraph or heading outside lists and quotes) from ns.
func (e *engine) ownDirection(ns []*stage.Node) {
	if !e.inherit {
		e.rtl = firstStrong(ns) == bR
	}
}

// container sets the direction of a list or quote from its content, which
// then follows it.
func (e *engine) container(ns []*stage.Node) {
	e.rtl, e.inherit = firstStrong(ns) == bR, true
}

// restoreDirection gives back the direction saved before a block.
func (e *engine) restoreDirection(rtl, inherit bool) { e.rtl, e.inherit = rtl, inherit }

// indentStart narrows the column by d on the side a line starts from: the
// left, or the right in right-to-left text. It returns what was applied.
func (e *engine) indentStart(d float64) float64 {
	if !e.rtl {
		return e.indent(d)
	}
	full := e.doc.Content.X1 - e.doc.Content.X0
	if (e.x1-d)-e.x0 < full*minColumn {
		d = max(0, e.x1-e.x0-full*minColumn)
	}
	e.x1 -= d
	return d
}

// outdentStart gives back what indentStart took.
func (e *engine) outdentStart(d float64) {
	if e.rtl {
		e.x1 += d
	} else {
		e.x0 -= d
	}
}

// lineAlign resolves the alignment of text: start is the left, or the
// right in right-to-left text.
func (e *engine) lineAlign(al align) align {
	if al == alignStart {
		if e.rtl {
			return alignRight
		}
		return alignLeft
	}
	return al
}
