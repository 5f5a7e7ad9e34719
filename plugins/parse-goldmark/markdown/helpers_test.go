package markdown

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark/text"

	"github.com/mdpress/mdpress/sdk/stage"
)

// depthOf is the deepest level in the tree (root 0), found without
// recursion so that a broken tree cannot crash the test.
func depthOf(root *stage.Node) int {
	type item struct {
		n *stage.Node
		d int
	}
	deepest := 0
	stack := []item{{root, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		deepest = max(deepest, it.d)
		for _, c := range it.n.Children {
			stack = append(stack, item{c, it.d + 1})
		}
	}
	return deepest
}

var (
	leafKinds = map[stage.Kind]bool{
		stage.KindText: true, stage.KindSoftBreak: true, stage.KindHardBreak: true,
		stage.KindCodeSpan: true, stage.KindRawHTML: true, stage.KindFootnoteRef: true,
		stage.KindCodeBlock: true, stage.KindHTMLBlock: true, stage.KindThematicBreak: true,
	}
	inlineKinds = map[stage.Kind]bool{
		stage.KindText: true, stage.KindSoftBreak: true, stage.KindHardBreak: true,
		stage.KindEmphasis: true, stage.KindStrong: true, stage.KindStrikethrough: true,
		stage.KindCodeSpan: true, stage.KindLink: true, stage.KindImage: true,
		stage.KindRawHTML: true, stage.KindFootnoteRef: true,
	}
	// inlineParents hold inline children only.
	inlineParents = map[stage.Kind]bool{
		stage.KindHeading: true, stage.KindParagraph: true, stage.KindTableCell: true,
		stage.KindEmphasis: true, stage.KindStrong: true, stage.KindStrikethrough: true,
		stage.KindLink: true, stage.KindImage: true,
	}
)

// checkShape reports the first node that breaks the tree's grammar: what
// a backend walking the tree may rely on.
func checkShape(root *stage.Node) error {
	if root.Kind != stage.KindDocument {
		return fmt.Errorf("root is %s", root.Kind)
	}
	var err error
	stack := []*stage.Node{root}
	for len(stack) > 0 && err == nil {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for i, c := range n.Children {
			if c == nil {
				return fmt.Errorf("%s has a nil child", n.Kind)
			}
			ok := true
			switch {
			case leafKinds[n.Kind]:
				ok = false
			case n.Kind == stage.KindList:
				ok = c.Kind == stage.KindListItem
			case n.Kind == stage.KindFootnotes:
				ok = c.Kind == stage.KindFootnote
			case n.Kind == stage.KindTable:
				ok = (i == 0) == (c.Kind == stage.KindTableHead) && (c.Kind == stage.KindTableHead || c.Kind == stage.KindTableRow)
			case n.Kind == stage.KindTableHead || n.Kind == stage.KindTableRow:
				ok = c.Kind == stage.KindTableCell
			case inlineParents[n.Kind]:
				ok = inlineKinds[c.Kind]
			default: // document, blockquote, list_item, footnote
				ok = !inlineKinds[c.Kind] && c.Kind != stage.KindListItem && c.Kind != stage.KindTableCell
			}
			if !ok {
				return fmt.Errorf("%s may not hold %s (child %d)", n.Kind, c.Kind, i)
			}
			if c.Kind == stage.KindText && i > 0 && n.Children[i-1].Kind == stage.KindText {
				return fmt.Errorf("adjacent text nodes in %s: %q, %q", n.Kind, n.Children[i-1].Text, c.Text)
			}
			if c.Kind == stage.KindText && c.Text == "" {
				return fmt.Errorf("empty text node in %s", n.Kind)
			}
			stack = append(stack, c)
		}
	}
	return err
}

// words splits s into runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// contentWords lists the words of the tree in document order: text, code,
// raw HTML, and the attributes that hold source text (a code block's
// language before its code; a link's target and title after its text, as
// the Markdown writes them).
func contentWords(root *stage.Node) []string {
	var out []string
	var walk func(n *stage.Node)
	walk = func(n *stage.Node) {
		if n.Kind == stage.KindCodeBlock {
			out = append(out, words(n.Attr("lang"))...)
		}
		out = append(out, words(n.Text)...)
		for _, c := range n.Children {
			walk(c)
		}
		switch n.Kind {
		case stage.KindLink:
			out = append(out, words(n.Attr("href")+" "+n.Attr("title"))...)
		case stage.KindImage:
			out = append(out, words(n.Attr("src")+" "+n.Attr("title"))...)
		}
	}
	walk(root)
	return out
}

// missingInOrder returns the first word of want that is not found in got
// after the previous match, with the words before it, or "" when want is
// a subsequence of got.
func missingInOrder(want, got []string) string {
	j := 0
	for i, w := range want {
		for j < len(got) && got[j] != w {
			j++
		}
		if j == len(got) {
			from := max(0, i-8)
			return fmt.Sprintf("%q (after %q)", w, strings.Join(want[from:i], " "))
		}
		j++
	}
	return ""
}

func textReader(src []byte) text.Reader { return text.NewReader(src) }

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
