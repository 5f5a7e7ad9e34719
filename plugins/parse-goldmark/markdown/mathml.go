package markdown

import (
	"bytes"
	"context"
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

	"github.com/mdpress/mdpress/plugins/internal/threadcpu"
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

// mathBudget is what is left of a document's bounds. Its time is the CPU
// time the conversions used (see threadcpu), not the wall clock's: on a
// loaded machine the same document converts the same formulas.
type mathBudget struct {
	tex, out int
	time     time.Duration
	// ctx is the parse call's, for the request id of the lines logged
	// about the document's formulas.
	ctx context.Context
	// labels are the document's, for \eqref and \ref (see mathLabels).
	labels map[string]string
}

func newMathBudget(ctx context.Context) *mathBudget {
	return &mathBudget{tex: maxDocMathBytes, out: maxDocMathOut, time: maxDocMathTime, ctx: ctx}
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
	tag  string // a display formula's \tag as printed, "(1)" (mathtag.go)
}

// convert returns the formula's conversion, converting it on first use.
func (c *mathConv) convert(tex []byte, display bool, b *mathBudget) *mathConv {
	if !c.done {
		c.done = true
		c.html, c.tree, c.tag, c.ok = toTaggedMathML(tex, display, b)
	}
	return c
}

// toMathML returns tex as MathML, for the HTML and compacted for the
// tree, or false when it is printed as source; a tag is dropped.
func toMathML(tex []byte, display bool, b *mathBudget) (html, tree string, ok bool) {
	html, tree, _, ok = toTaggedMathML(tex, display, b)
	return html, tree, ok
}

// toTaggedMathML is toMathML that also returns a display formula's tag
// (see displayTag), which the MathML does not hold.
func toTaggedMathML(tex []byte, display bool, b *mathBudget) (html, tree, tag string, ok bool) {
	if len(bytes.TrimSpace(tex)) == 0 || len(tex) > maxFormulaBytes || len(tex) > b.tex ||
		b.time <= 0 || macroDef.Match(tex) {
		return "", "", "", false
	}
	now, release := threadcpu.Clock()
	start := now()
	defer func() {
		b.time -= now() - start
		release()
	}()
	// The rewrite adds a few bytes per command it rewrites: what the
	// converter reads is held to its bounds.
	// Inline, a tag is an error in TeX, and multline has no line to span.
	in, resolved := resolveRefs(tex, b.labels)
	env, src, rowTags, ok := envRows(in)
	multline := strings.HasPrefix(env, "multline")
	if !ok || !display && (rowTags != nil || multline) {
		return "", "", "", false
	}
	if display && env == "" {
		src, tag = displayTag(in)
	}
	src, unnested := nestedAlphabets(src)
	src, changed, ok := rewriteTeX(src)
	if !ok || len(src) > maxFormulaBytes || len(src) > b.tex {
		return "", "", "", false
	}
	// fixMathML puts the author's TeX, the tags with it, back in the
	// annotation.
	changed = changed || resolved || unnested || tag != "" || rowTags != nil || multline
	b.tex -= len(src)
	doc := treeblood.NewDocument(nil, false)
	doc.PrintOneLine = true
	var out string
	var err error
	if display {
		out, err = doc.DisplayStyle(string(src))
	} else {
		out, err = doc.TextStyle(string(src))
	}
	out = strings.TrimSpace(out)
	if err != nil {
		converterFailed(b.ctx, err, tex)
		return "", "", "", false
	}
	if changed || strings.Contains(out, "<menclose") {
		if out, ok = fixMathML(out, tex); !ok {
			return "", "", "", false
		}
	}
	if spaced, ok := spaceFunctions(out); ok {
		out = spaced
	}
	out, tree, ok = cleanMathML(out)
	if ok && (rowTags != nil || multline) {
		if out, ok = finishRows(out, false, multline, rowTags); ok {
			tree, ok = finishRows(tree, true, multline, rowTags)
		}
	}
	if ok && !display {
		out = breakInline(out)
	}
	// Only the HTML counts against the budget, as it did before the tree
	// carried MathML, so that Chromium converts the same formulas: the
	// tree's form is a part of it, bounded with it.
	if !ok || len(out) > b.out {
		return "", "", "", false
	}
	b.out -= len(out)
	return out, tree, tag, true
}

// cleanMathML writes s again with each element's attributes in name
// order, since the converter writes them in map order and the same
// formula must give the same HTML, or reports false when s holds anything
// but MathML elements, each end tag closing the element opened last and
// no element inside a token element (mi, mn, mo, ms, mtext, which hold
// text): the converter copies \text{...} through unescaped, so
// "\text{<div>}" would otherwise open an HTML element in the formula,
// "\text{</math>}" close elements it did not open (Chromium then printed
// the formula's TeX annotation as text, or nothing at all) and
// "\text{<mroot></mroot>}" draw nothing in Chromium.
// It also returns the compact form the tree carries: the same elements
// without the TeX annotation (the node's Text already holds it), the
// semantics wrapper and the attributes only a browser reads (class,
// style, xmlns), about half the size.
func cleanMathML(s string) (html, tree string, ok bool) {
	var b, t strings.Builder
	b.Grow(len(s))
	t.Grow(len(s) / 2)
	skip := 0 // depth inside an annotation
	var open []string
	z := xhtml.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		switch tt {
		case xhtml.ErrorToken:
			if !errors.Is(z.Err(), io.EOF) || len(open) > 0 {
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
			if tt != xhtml.EndTagToken && len(open) > 0 && tokenElements[open[len(open)-1]] {
				return "", "", false
			}
			switch tt {
			case xhtml.StartTagToken:
				open = append(open, tok.Data)
			case xhtml.EndTagToken:
				if len(open) == 0 || open[len(open)-1] != tok.Data {
					return "", "", false
				}
				open = open[:len(open)-1]
			}
			slices.SortFunc(tok.Attr, func(a, b xhtml.Attribute) int { return strings.Compare(a.Key, b.Key) })
			if tok.Data == "mtd" {
				for i, a := range tok.Attr {
					if a.Key == "style" {
						tok.Attr[i].Val = cellAlign.ReplaceAllString(a.Val, "text-align:-webkit-$1")
					}
				}
			}
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

// cellAlign matches the alignment the converter gives a table's cell.
// Chromium lays a cell's content out as a block, which text-align right
// or center does not move: the left column of aligned stood flush left,
// gather's rows, a matrix's columns too. Its -webkit- values align
// blocks.
var cellAlign = regexp.MustCompile(`text-align:\s*(left|right|center)\b`)

// mathMLElements are MathML's presentation elements (MathML Core and the
// few of MathML 3 the converter writes). <merror> is not one of them: the
// converter writes it, holding the command's name, for a command it does
// not know, which Chromium drew as a small red mark and render-fpdf
// refused, so such a formula prints as its source on both.
var mathMLElements = func() map[string]bool {
	m := map[string]bool{}
	for _, e := range strings.Fields(`math semantics annotation annotation-xml mrow mi mn mo ms mtext mspace
		mfrac msqrt mroot msub msup msubsup munder mover munderover mmultiscripts mprescripts none
		mtable mtr mtd mlabeledtr mstyle mpadded mphantom menclose maction mfenced mglyph`) {
		m[e] = true
	}
	return m
}()

// tokenElements are the MathML elements whose content is text.
var tokenElements = map[string]bool{"mi": true, "mn": true, "mo": true, "ms": true, "mtext": true}

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
		b := newMathBudget(context.Background())
		doc.SetAttribute(mathBudgetAttr, b)
		return b
	}
	return newMathBudget(context.Background())
}

func renderMathInline(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*mathInline)
	if c := n.conv.convert(n.tex, n.display, budgetOf(n)); c.ok {
		if c.tag != "" {
			writeTagged(w, "span", "math-display-inline", c.html, c.tag)
		} else {
			_, _ = w.WriteString(c.html)
		}
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
		if c.tag != "" {
			writeTagged(w, "div", "math-display", c.html, c.tag)
			_, _ = w.WriteString("\n")
			return ast.WalkSkipChildren, nil
		}
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

// breakInline cuts an inline formula after each operator at its top level
// (a + b = c after the + and the =) into one <math> element per piece.
// Chromium breaks no line inside a <math>: one wider than the text ran
// past the page, and Chromium then shrank every page of the document to
// fit it, the formula still cut at the page's edge. Between two <math>
// elements a line may break, as TeX breaks inline math after a relation
// or a binary operator. The pieces lose the TeX annotation, which no
// reader of the PDF sees. s is cleanMathML's output; a formula of another
// shape, or of one piece, is returned as it is.
func breakInline(s string) string {
	z := xhtml.NewTokenizer(strings.NewReader(s))
	var (
		open   string // the <math ...> start tag, written again for each piece
		pieces []string
		piece  strings.Builder
		depth  int
		// mo is the text of the top-level <mo> being read; inMo says one is.
		mo   strings.Builder
		inMo bool
		// afterOp says the previous top-level element was an operator
		// other than a closing fence: an operator after one (or first) is
		// a sign, as in = -x or (-x), and no line breaks after it.
		afterOp = true
		isOp    bool
		// fences counts the stretchy brackets open at the top level
		// (\left( ... \right), \{ ... \}), and bars whether a stretchy
		// | is: their brackets stretch to what is between them, which a
		// cut would part, and TeX breaks no line inside \left...\right.
		fences int
		bars   bool
		// stretchy says the top-level <mo> being read stretches.
		stretchy bool
		// annotated is set once the TeX annotation after the formula began.
		annotated bool
	)
	cut := func() {
		pieces = append(pieces, piece.String())
		piece.Reset()
	}
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			break
		}
		raw := string(z.Raw())
		tok := z.Token()
		switch tt {
		case xhtml.StartTagToken:
			depth++
			switch {
			case depth == 1 && tok.Data == "math":
				open = raw
				continue
			case depth == 2 && tok.Data == "semantics", depth == 3 && tok.Data == "mrow" && open != "" && !annotated:
				continue
			case depth == 3 && tok.Data == "annotation":
				annotated = true
				continue
			case depth < 4:
				return s // a shape the converter does not write
			}
			if depth == 4 {
				isOp = tok.Data == "mo" && attr(tok, "form") != "postfix"
				stretchy = tok.Data == "mo" && (attr(tok, "stretchy") == "true" || attr(tok, "fence") == "true")
				inMo = tok.Data == "mo" && (attr(tok, "form") == "" || stretchy)
				mo.Reset()
			}
		case xhtml.EndTagToken:
			depth--
			if depth < 3 {
				continue
			}
			if depth == 3 {
				piece.WriteString(raw)
				op := html.UnescapeString(mo.String())
				switch {
				case !inMo:
				case stretchy && strings.ContainsAny(op, "([{⟨⌈⌊"):
					fences++
				case stretchy && strings.ContainsAny(op, ")]}⟩⌉⌋"):
					fences, isOp = max(0, fences-1), false
				case stretchy && strings.ContainsAny(op, "|‖"):
					bars = !bars
					isOp = bars
				case !afterOp && fences == 0 && !bars && breakAfter[op]:
					cut()
				}
				inMo, afterOp = false, isOp
				continue
			}
		case xhtml.SelfClosingTagToken:
			if depth < 3 {
				return s
			}
			if depth == 3 {
				afterOp = false
			}
		case xhtml.TextToken:
			if depth < 4 {
				continue // the annotation's TeX, or the converter's spaces
			}
			if inMo && depth == 4 {
				mo.WriteString(raw)
			}
		}
		piece.WriteString(raw)
	}
	if piece.Len() > 0 {
		cut()
	}
	if open == "" || len(pieces) < 2 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(pieces)*(len(open)+len("<mrow></mrow></math>")))
	for _, p := range pieces {
		b.WriteString(open)
		b.WriteString("<mrow>")
		b.WriteString(p)
		b.WriteString("</mrow></math>")
	}
	return b.String()
}

// breakAfter are the operators a line may break after: relations and
// binary operators, as TeX allows in inline math.
var breakAfter = func() map[string]bool {
	m := map[string]bool{}
	for _, op := range strings.Fields(`= ≠ < > ≤ ≥ ≪ ≫ ≈ ≡ ∼ ≃ ≅ ∝ → ← ↔ ⇒ ⇐ ⇔ ↦ ∈ ∉ ⊂ ⊃ ⊆ ⊇ + − ± ∓ × · ⋅ ∗ ∪ ∩ ∧ ∨ ⊕ ⊗`) {
		m[op] = true
	}
	return m
}()

func attr(tok xhtml.Token, key string) string {
	for _, a := range tok.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
