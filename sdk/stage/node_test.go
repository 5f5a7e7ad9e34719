package stage

import "testing"

func TestPlainTextSeparatesBlocks(t *testing.T) {
	text := func(s string) *Node { return &Node{Kind: KindText, Text: s} }
	doc := &Node{Kind: KindDocument, Children: []*Node{
		{Kind: KindHeading, Children: []*Node{text("Title "), {Kind: KindEmphasis, Children: []*Node{text("here")}}}},
		{Kind: KindParagraph, Children: []*Node{text("one"), {Kind: KindSoftBreak}, text("two")}},
		{Kind: KindTable, Children: []*Node{{Kind: KindTableHead, Children: []*Node{
			{Kind: KindTableCell, Children: []*Node{text("a")}}, {Kind: KindTableCell, Children: []*Node{text("b")}},
		}}}},
		{Kind: KindCodeBlock, Text: "x := 1"},
	}}
	if got, want := doc.PlainText(), "Title here one two a b x := 1"; got != want {
		t.Fatalf("PlainText = %q, want %q", got, want)
	}
}
