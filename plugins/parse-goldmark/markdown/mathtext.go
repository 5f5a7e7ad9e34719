package markdown

import (
	"strings"
	"unicode/utf8"

	"github.com/mdpress/mdpress/sdk/stage"
	xhtml "golang.org/x/net/html"
)

// Math in a heading goes into the PDF's title and bookmarks, which hold
// plain text only. Its TeX source ("e^{i\pi}+1=0") reads poorly there,
// and the formula's characters run together, as Chromium titled its
// bookmark ("𝑒𝑖𝜋+1=0": e times i times pi), read wrongly. The plain form
// is the formula written on one line the way people type math: scripts
// after ^ and _, fractions with /, roots with √, each group that needs it
// in parentheses ("e^(iπ)+1=0", "∑_(k=1)^n k=n(n+1)/2"). It adds only
// these characters to the MathML's own, so a renderer can still tell
// which laid-out text a title stands for.

// plainMath sets the attribute plain on each formula in the headings of
// root to its plain form, read from the MathML the tree carries: a
// formula the converter did not take (past the document's bounds, or
// refused) keeps its source there as on the page, and is not converted
// twice.
func plainMath(root *stage.Node) {
	root.Walk(func(n *stage.Node) bool {
		if n.Kind != stage.KindHeading {
			return true
		}
		n.Walk(func(m *stage.Node) bool {
			if m.Kind != stage.KindCodeSpan || m.Attr("math") == "" {
				return true
			}
			if ml := m.Attr("mathml"); ml != "" {
				if s := mathText(ml); s != "" {
					m.Attrs["plain"] = s
				}
			}
			return false
		})
		return false
	})
}

// mathText is the plain form of the MathML ml, "" if it has none.
func mathText(ml string) string {
	doc, err := xhtml.Parse(strings.NewReader(ml))
	if err != nil {
		return ""
	}
	var b strings.Builder
	var find func(n *xhtml.Node) bool
	find = func(n *xhtml.Node) bool {
		if n.Type == xhtml.ElementNode && n.Data == "math" {
			writeMath(&b, n)
			return true
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if find(c) {
				return true
			}
		}
		return false
	}
	find(doc)
	return strings.Join(strings.Fields(b.String()), " ")
}

// writeMath writes the plain form of the MathML element n.
func writeMath(b *strings.Builder, n *xhtml.Node) {
	if n.Type == xhtml.TextNode {
		b.WriteString(n.Data)
		return
	}
	if n.Type != xhtml.ElementNode {
		return
	}
	args := elementChildren(n)
	arg := func(i int) string {
		if i >= len(args) {
			return ""
		}
		var s strings.Builder
		writeMath(&s, args[i])
		if args[i].Data == "mi" {
			return strings.TrimSpace(s.String()) // a name, sin^2: one piece
		}
		return group(strings.TrimSpace(s.String()))
	}
	switch n.Data {
	case "annotation", "annotation-xml", "mphantom":
	case "semantics":
		if len(args) > 0 {
			writeMath(b, args[0])
		}
	case "mspace":
		b.WriteByte(' ')
	case "mo":
		// The function application operator the parser writes after a
		// function's name (spaceFunctions) is the space in "sin x".
		if strings.TrimSpace(textOf(n)) == "\u2061" {
			b.WriteByte(' ')
			break
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			writeMath(b, c)
		}
	case "msup":
		b.WriteString(arg(0) + "^" + arg(1))
	case "msub":
		b.WriteString(arg(0) + "_" + arg(1))
	case "msubsup":
		b.WriteString(arg(0) + "_" + arg(1) + "^" + arg(2))
	case "munder":
		b.WriteString(arg(0) + "_" + arg(1))
	case "mover":
		if nodeAttr(n, "accent") == "true" && len(args) == 2 {
			var a strings.Builder
			writeMath(&a, args[1])
			b.WriteString(arg(0) + accent(strings.TrimSpace(a.String())))
			break
		}
		b.WriteString(arg(0) + "^" + arg(1))
	case "munderover":
		b.WriteString(arg(0) + "_" + arg(1) + "^" + arg(2))
	case "mfrac":
		b.WriteString(arg(0) + "/" + arg(1))
	case "msqrt":
		var s strings.Builder
		for _, c := range args {
			writeMath(&s, c)
		}
		b.WriteString("√" + group(strings.TrimSpace(s.String())))
	case "mroot":
		switch arg(1) {
		case "3":
			b.WriteString("∛" + arg(0))
		case "4":
			b.WriteString("∜" + arg(0))
		default:
			b.WriteString(arg(0) + "^(1/" + arg(1) + ")")
		}
	case "mtd":
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			writeMath(b, c)
		}
		if n.NextSibling != nil {
			b.WriteString(", ")
		}
	case "mtr":
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			writeMath(b, c)
		}
		if n.NextSibling != nil {
			b.WriteString("; ")
		}
	default: // math, mrow, mstyle, mi, mn, mo, mtext, mtable...
		// Operands side by side are a product or a function's argument:
		// spaced where running together would misread ("sin x", "∑_(k=1)^n
		// k"), not between single letters ("iπ", "dx"). A term with
		// scripts is as long as its base: mc^2 reads as people type it,
		// where "m c^2" read as two terms.
		prev := ""
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			var s strings.Builder
			writeMath(&s, c)
			cur := s.String()
			if operand(c) && prev != "" && (utf8.RuneCountInString(prev) > 1 || baseLen(c, cur) > 1) {
				b.WriteByte(' ')
			}
			b.WriteString(cur)
			prev = ""
			if operand(c) {
				prev = strings.TrimSpace(cur)
			}
		}
	}
}

// baseLen is the length in characters of the term n, written as s: of
// its base when it is a letter or number with scripts.
func baseLen(n *xhtml.Node, s string) int {
	if n.Type == xhtml.ElementNode {
		switch n.Data {
		case "msub", "msup", "msubsup", "munder", "mover", "munderover":
			// An operator's scripts are its limits: ∫_0^1 stays apart.
			if args := elementChildren(n); len(args) > 0 && args[0].Data != "mo" {
				var b strings.Builder
				writeMath(&b, args[0])
				s = b.String()
			}
		}
	}
	return utf8.RuneCountInString(strings.TrimSpace(s))
}

// operand reports whether the MathML n is a term rather than an operator,
// space or text.
func operand(n *xhtml.Node) bool {
	if n.Type != xhtml.ElementNode {
		return false
	}
	switch n.Data {
	case "mo", "mspace", "mtext", "annotation", "annotation-xml", "mphantom":
		return false
	}
	return true
}

// accent is the combining mark that a MathML accent (\hat, \tilde...)
// puts over its letter, or the accent itself after the letter.
func accent(a string) string {
	switch a {
	case "^", "ˆ":
		return "\u0302"
	case "~", "˜":
		return "\u0303"
	case "¯", "‾", "_":
		return "\u0304"
	case "˙", ".":
		return "\u0307"
	case "¨":
		return "\u0308"
	case "→", "⃗":
		return "\u20d7"
	}
	return a
}

// group puts s in parentheses unless it reads as one piece: one
// character or a number. Letters are not: e^ix would read as e^i times x.
func group(s string) string {
	if utf8.RuneCountInString(s) <= 1 || isNumber(s) {
		return s
	}
	return "(" + s + ")"
}

func isNumber(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r == '.') {
			return false
		}
	}
	return true
}

func textOf(n *xhtml.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == xhtml.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

func elementChildren(n *xhtml.Node) []*xhtml.Node {
	var out []*xhtml.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == xhtml.ElementNode {
			out = append(out, c)
		}
	}
	return out
}

func nodeAttr(n *xhtml.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
