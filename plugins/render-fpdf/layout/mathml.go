package layout

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
)

// Formulas come as the parser's compact MathML (stage.Node's attribute
// mathml) and are laid out from the subset of elements below; a formula
// holding any other element, or nested deeper than maxMathDepth, is
// printed as its TeX source, whole, as before, so that nothing is drawn
// wrong but plausible.

// maxMathDepth bounds the nesting of a formula's elements: the layout
// recurses once per level, and scripts past a few levels are too small to
// read anyway. \frac nested as deep as the parser's 8 KiB allow is about
// 1,000 levels.
const maxMathDepth = 32

// maxMathNodes bounds the elements of one formula; the parser's 8 KiB of
// TeX make a few thousand.
const maxMathNodes = 20_000

// mnode is one MathML element.
type mnode struct {
	tag   string
	text  string // a token element's characters
	attrs []xml.Attr
	kids  []*mnode
}

func (n *mnode) attr(name string) string {
	for _, a := range n.attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// mathTags are the elements laid out; the value says whether the
// element holds characters (a token) rather than elements.
var mathTags = map[string]bool{
	"math": false, "mrow": false, "mstyle": false, "mpadded": false, "mphantom": false,
	"mi": true, "mn": true, "mo": true, "mtext": true, "mspace": false,
	"msup": false, "msub": false, "msubsup": false, "mfrac": false, "msqrt": false, "mroot": false,
	"munder": false, "mover": false, "munderover": false,
	"mtable": false, "mtr": false, "mlabeledtr": false, "mtd": false, "menclose": false,
}

// mathArity is how many children an element must have.
var mathArity = map[string]int{
	"msup": 2, "msub": 2, "msubsup": 3, "mfrac": 2, "mroot": 2, "munder": 2, "mover": 2, "munderover": 3,
}

var errMathUnsupported = errors.New("formula outside the laid-out subset")

// parseMathML reads a formula; it fails on anything outside the subset.
// The work is linear in the input: each element is read once.
func parseMathML(s string) (*mnode, error) {
	d := xml.NewDecoder(strings.NewReader(s))
	d.Strict = true
	var root *mnode
	var stack []*mnode
	nodes := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			_, ok := mathTags[t.Name.Local]
			if !ok || len(stack) >= maxMathDepth || (root != nil && len(stack) == 0) {
				return nil, errMathUnsupported
			}
			if nodes++; nodes > maxMathNodes {
				return nil, errMathUnsupported
			}
			n := &mnode{tag: t.Name.Local, attrs: t.Attr}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				if mathTags[p.tag] { // an element inside a token
					return nil, errMathUnsupported
				}
				p.kids = append(p.kids, n)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) == 0 {
				return nil, errMathUnsupported
			}
			n := stack[len(stack)-1]
			if want, ok := mathArity[n.tag]; ok && len(n.kids) != want {
				return nil, errMathUnsupported
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				if strings.TrimSpace(string(t)) != "" {
					return nil, errMathUnsupported
				}
				continue
			}
			n := stack[len(stack)-1]
			if !mathTags[n.tag] {
				if strings.TrimSpace(string(t)) != "" {
					return nil, errMathUnsupported
				}
				continue
			}
			n.text += string(t)
		}
	}
	if root == nil || root.tag != "math" || len(stack) != 0 {
		return nil, errMathUnsupported
	}
	return root, nil
}
