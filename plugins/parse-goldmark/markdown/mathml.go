package markdown

import (
	"bytes"
	"errors"
	"html"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/wyatt915/treeblood"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
	xhtml "golang.org/x/net/html"
)

// The converter (treeblood) cannot be stopped once started, so what it is
// given is bounded instead: a formula longer than maxFormulaBytes, past a
// document's maxDocMathBytes of TeX, maxDocMathOut of MathML or
// maxDocMathTime, or one that defines macros (their expansion is
// exponential: 16 \defs of four calls each ran for minutes) is printed as
// its source, as one the converter refuses is. Within these bounds the
// worst input found by fuzzing costs milliseconds.
const (
	maxFormulaBytes = 8 << 10
	maxDocMathBytes = 256 << 10
	maxDocMathOut   = 4 << 20
	maxDocMathTime  = 2 * time.Second
)

// macroDef matches the commands that define macros.
var macroDef = regexp.MustCompile(`\\(?:def|newcommand|renewcommand)(?:[^A-Za-z]|$)`)

// mathBudget is what is left of a document's bounds.
type mathBudget struct {
	tex, out int
	deadline time.Time
}

func newMathBudget(now time.Time) *mathBudget {
	return &mathBudget{tex: maxDocMathBytes, out: maxDocMathOut, deadline: now.Add(maxDocMathTime)}
}

// mathBudgetAttr holds a document's *mathBudget on its goldmark document.
var mathBudgetAttr = []byte("mdpressMathBudget")

// mathConv is a formula's conversion, made once for the HTML and the
// tree alike, so that both agree and the budget is spent once.
type mathConv struct {
	done bool
	ok   bool
	html string // the MathML for the HTML
	tree string // its compact form for the tree (see compactMathML)
}

// convert returns the formula's conversion, converting it on first use.
func (c *mathConv) convert(tex []byte, display bool, b *mathBudget) *mathConv {
	if !c.done {
		c.done = true
		c.html, c.tree, c.ok = toMathML(tex, display, b)
	}
	return c
}

// toMathML returns tex as MathML, for the HTML and compacted for the
// tree, or false when it is printed as source.
func toMathML(tex []byte, display bool, b *mathBudget) (html, tree string, ok bool) {
	if len(bytes.TrimSpace(tex)) == 0 || len(tex) > maxFormulaBytes || len(tex) > b.tex ||
		!time.Now().Before(b.deadline) || macroDef.Match(tex) {
		return "", "", false
	}
	b.tex -= len(tex)
	doc := treeblood.NewDocument(nil, false)
	doc.PrintOneLine = true
	var out string
	var err error
	if display {
		out, err = doc.DisplayStyle(string(tex))
	} else {
		out, err = doc.TextStyle(string(tex))
	}
	out = strings.TrimSpace(out)
	if err != nil {
		converterFailed(err, tex)
		return "", "", false
	}
	out, tree, ok = cleanMathML(out)
	// Only the HTML counts against the budget, as it did before the tree
	// carried MathML, so that Chromium converts the same formulas: the
	// tree's form is a part of it, bounded with it.
	if !ok || len(out) > b.out {
		return "", "", false
	}
	b.out -= len(out)
	return out, tree, true
}

// cleanMathML writes s again with each element's attributes in name
// order, since the converter writes them in map order and the same
// formula must give the same HTML, or reports false when s holds anything
// but MathML elements: the converter copies \text{...} through unescaped,
// so "\text{<div>}" would otherwise open an HTML element in the formula.
// It also returns the compact form the tree carries: the same elements
// without the TeX annotation (the node's Text already holds it), the
// semantics wrapper and the attributes only a browser reads (class,
// style, xmlns), about half the size.
func cleanMathML(s string) (html, tree string, ok bool) {
	var b, t strings.Builder
	b.Grow(len(s))
	t.Grow(len(s) / 2)
	skip := 0 // depth inside an annotation
	z := xhtml.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		switch tt {
		case xhtml.ErrorToken:
			if !errors.Is(z.Err(), io.EOF) {
				return "", "", false
			}
			return b.String(), t.String(), true
		case xhtml.TextToken:
			esc := xhtml.EscapeString(string(z.Text()))
			b.WriteString(esc)
			if skip == 0 {
				t.WriteString(esc)
			}
		case xhtml.StartTagToken, xhtml.EndTagToken, xhtml.SelfClosingTagToken:
			tok := z.Token()
			if !mathMLElements[tok.Data] {
				return "", "", false
			}
			slices.SortFunc(tok.Attr, func(a, b xhtml.Attribute) int { return strings.Compare(a.Key, b.Key) })
			b.WriteString(tok.String())
			annotation := tok.Data == "annotation" || tok.Data == "annotation-xml"
			if annotation && tt == xhtml.StartTagToken {
				skip++
			}
			if skip == 0 && tok.Data != "semantics" {
				tok.Attr = slices.DeleteFunc(tok.Attr, func(a xhtml.Attribute) bool {
					return a.Key == "class" || a.Key == "style" || a.Key == "xmlns" ||
						tok.Data == "math" && a.Key == "displaystyle"
				})
				t.WriteString(tok.String())
			}
			if annotation && tt == xhtml.EndTagToken && skip > 0 {
				skip--
			}
		default:
			return "", "", false
		}
	}
}

// mathMLElements are MathML's presentation elements (MathML Core and the
// few of MathML 3 the converter writes).
var mathMLElements = func() map[string]bool {
	m := map[string]bool{}
	for _, e := range strings.Fields(`math semantics annotation annotation-xml mrow mi mn mo ms mtext mspace
		mfrac msqrt mroot msub msup msubsup munder mover munderover mmultiscripts mprescripts none
		mtable mtr mtd mlabeledtr mstyle mpadded mphantom menclose merror maction mfenced mglyph`) {
		m[e] = true
	}
	return m
}()

// mathRenderer writes math as MathML, or as its source in a code span or
// block of class math-tex when it is not converted.
type mathRenderer struct{}

func (mathRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindMathInline, renderMathInline)
	reg.Register(kindMathBlock, renderMathBlock)
}

func budgetOf(n ast.Node) *mathBudget {
	if doc := n.OwnerDocument(); doc != nil {
		if v, ok := doc.Attribute(mathBudgetAttr); ok {
			if b, ok := v.(*mathBudget); ok {
				return b
			}
		}
		b := newMathBudget(time.Now())
		doc.SetAttribute(mathBudgetAttr, b)
		return b
	}
	return newMathBudget(time.Now())
}

func renderMathInline(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*mathInline)
	if c := n.conv.convert(n.tex, n.display, budgetOf(n)); c.ok {
		_, _ = w.WriteString(c.html)
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.WriteString(`<code class="math-tex">`)
	_, _ = w.WriteString(html.EscapeString(string(n.tex)))
	_, _ = w.WriteString(`</code>`)
	return ast.WalkSkipChildren, nil
}

func renderMathBlock(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*mathBlock)
	tex := mathTeX(n, src)
	if c := n.conv.convert(tex, true, budgetOf(n)); c.ok {
		_, _ = w.WriteString(`<div class="math-display">`)
		_, _ = w.WriteString(c.html)
		_, _ = w.WriteString("</div>\n")
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.WriteString(`<pre class="math-tex"><code>`)
	_, _ = w.WriteString(html.EscapeString(string(tex)))
	_, _ = w.WriteString("</code></pre>\n")
	return ast.WalkSkipChildren, nil
}
