package markdown

import (
	"errors"
	"io"
	"strings"

	xhtml "golang.org/x/net/html"
)

// TeX puts a thin space (3mu) between a function's name and an ordinary
// atom after it: \sin x reads "sin x", \sin(x) "sin(x)"; and one before
// the name after an ordinary atom: 2\sin x. The converter marks the name
// with lspace on its <mi>, which MathML Core (Chromium) ignores: Chromium
// printed "sinx", "argmaxf", "2sin". MathML Core spaces only operators by
// their lspace and rspace, so spaceFunctions writes the function
// application operator (U+2061, invisible) after the name with the thin
// space as its rspace, and a thin <mspace> before it. render-fpdf spaces
// after function names itself by the same rule (layout/mathbox.go) and
// lays the operator out as nothing, so that space is not doubled there;
// the space before is the <mspace>, for it as for Chromium.

// funcApply is the operator spaceFunctions writes after a function name.
const funcApply = `<mo lspace="0" rspace="0.1667em">&#x2061;</mo>`

// funcBefore is the thin space TeX puts before a function's name after
// an ordinary atom or a closing delimiter: 2\sin x, (a+b)\sin x.
const funcBefore = `<mspace width="0.1667em"/>`

// mlNode is an element of the converter's MathML, or a text between
// elements (tag empty), held with its tokens as written so that the
// MathML is written back unchanged but for what is inserted.
type mlNode struct {
	tag        string
	start, end string
	kids       []*mlNode
}

// spaceFunctions returns s with funcApply after each function name (an
// <mi> of more than one character, bare or as the base of scripts or
// limits, as \max_z is) that an ordinary element follows in its row: not
// an operator, nor a row or scripts an operator begins (\left(, -x,
// (x)^2), which keep their own spacing and none before a delimiter. It
// reports false when s is not MathML it can read.
func spaceFunctions(s string) (string, bool) {
	if !longIdentifier(s) {
		return s, true // no name to space: most formulas, read once more only here
	}
	z := xhtml.NewTokenizer(strings.NewReader(s))
	root := &mlNode{}
	stack := []*mlNode{root}
	for {
		tt := z.Next()
		top := stack[len(stack)-1]
		switch tt {
		case xhtml.ErrorToken:
			if !errors.Is(z.Err(), io.EOF) || len(stack) != 1 {
				return "", false
			}
			var b strings.Builder
			b.Grow(len(s) + len(s)/8)
			root.write(&b)
			return b.String(), true
		case xhtml.TextToken:
			top.kids = append(top.kids, &mlNode{start: string(z.Raw())})
		case xhtml.StartTagToken:
			name, _ := z.TagName()
			n := &mlNode{tag: string(name), start: string(z.Raw())}
			top.kids = append(top.kids, n)
			stack = append(stack, n)
		case xhtml.SelfClosingTagToken:
			name, _ := z.TagName()
			top.kids = append(top.kids, &mlNode{tag: string(name), start: string(z.Raw())})
		case xhtml.EndTagToken:
			name, _ := z.TagName()
			if len(stack) == 1 || top.tag != string(name) {
				return "", false
			}
			top.end = string(z.Raw())
			stack = stack[:len(stack)-1]
		default:
			return "", false
		}
	}
}

// longIdentifier reports whether the MathML s has an <mi> of more than
// one character, which a function's name is (see isFunc).
func longIdentifier(s string) bool {
	for {
		i := strings.Index(s, "<mi")
		if i < 0 {
			return false
		}
		s = s[i+3:]
		if s == "" || (s[0] != '>' && s[0] != ' ') {
			continue // <mn>, <mo>, <mrow>...
		}
		j := strings.IndexByte(s, '>')
		if j < 0 {
			return false
		}
		s = s[j+1:]
		end := strings.IndexByte(s, '<')
		if end < 0 {
			end = len(s)
		}
		if nameLength(s[:end]) > 1 {
			return true
		}
	}
}

// nameLength is how many characters an <mi>'s text (as written, escaped)
// has, not counting variation selectors: the converter ends \mathcal and
// \mathscr letters with one (𝒪 U+FE00), which made \mathcal{F}x read as a
// function's name, spaced as \sin x is, in TeX it is not.
func nameLength(text string) int {
	n := 0
	for _, r := range strings.TrimSpace(xhtml.UnescapeString(text)) {
		if r < 0xFE00 || r > 0xFE0F {
			n++
		}
	}
	return n
}

// rowElements are the elements whose children are laid out as a row; the
// children of the others (msub, mfrac, ...) are parts in their places.
var rowElements = map[string]bool{
	"math": true, "mrow": true, "mstyle": true, "mpadded": true, "mphantom": true,
	"msqrt": true, "mtd": true, "menclose": true,
}

func (n *mlNode) write(b *strings.Builder) {
	b.WriteString(n.start)
	var prev *mlNode // the previous element of the row
	for _, k := range n.kids {
		if k.tag != "" && rowElements[n.tag] && prev != nil {
			switch {
			case prev.isFunc() && !k.leadsWithMo():
				b.WriteString(funcApply)
			case k.isFunc() && !prev.isFunc() && (prev.tag != "mo" || prev.closes()):
				b.WriteString(funcBefore)
			}
		}
		k.write(b)
		if k.tag != "" {
			prev = k
		}
	}
	b.WriteString(n.end)
}

// first is n's first element, or nil.
func (n *mlNode) first() *mlNode {
	for _, k := range n.kids {
		if k.tag != "" {
			return k
		}
	}
	return nil
}

// isFunc reports whether n is a function's name, as render-fpdf's
// opClassOf tells one.
func (n *mlNode) isFunc() bool {
	switch n.tag {
	case "mi":
		var text strings.Builder
		for _, k := range n.kids {
			if k.tag == "" {
				text.WriteString(k.start)
			}
		}
		return nameLength(text.String()) > 1
	case "msub", "msup", "msubsup", "munder", "mover", "munderover":
		f := n.first()
		return f != nil && f.isFunc()
	case "mrow":
		f := n.first()
		elems := 0
		for _, k := range n.kids {
			if k.tag != "" {
				elems++
			}
		}
		return elems == 1 && f.isFunc()
	}
	return false
}

// closes reports whether the operator n is a closing delimiter, which
// TeX spaces from a function's name after it as it spaces a letter.
func (n *mlNode) closes() bool {
	if strings.Contains(n.start, `form="postfix"`) {
		return true
	}
	for _, k := range n.kids {
		if k.tag == "" && strings.ContainsAny(xhtml.UnescapeString(k.start), ")]}⟩⌋⌉") {
			return true
		}
	}
	return false
}

// leadsWithMo reports whether n is an operator or begins with one.
func (n *mlNode) leadsWithMo() bool {
	switch n.tag {
	case "mo":
		return true
	case "mrow", "mstyle", "mpadded", "msub", "msup", "msubsup", "munder", "mover", "munderover":
		f := n.first()
		return f != nil && f.leadsWithMo()
	}
	return false
}
