package markdown

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Math as GitHub writes it: inline $...$ and $`...`$, display $$...$$
// (one line, or $$ alone on the lines around it) and ```math fenced
// blocks. What counts as math follows pandoc's rule, which GitHub's
// examples agree with: an opening $ is followed by a non-space, a closing
// $ follows a non-space and is not followed by a digit, so "$5 and $10"
// stays text. \$ is a literal dollar outside math and does not close it
// inside; dollars in code spans are code, as the code span is parsed
// first. GitHub's other way to write a dollar on a line with math,
// <span>$</span>, holds too: a $ between two tags (">$<") is text.
//
// The tree keeps the TeX source in the nodes a backend without math
// already draws (see stage.Node): inline math is a code span, display math
// a code block with lang "math", both with the attribute math. The HTML
// carries MathML (see mathml.go), which Chromium lays out without scripts.

var (
	kindMathInline = ast.NewNodeKind("MathInline")
	kindMathBlock  = ast.NewNodeKind("MathBlock")
)

// mathInline is math inside a paragraph; display is true for $$...$$.
type mathInline struct {
	ast.BaseInline
	tex     []byte
	display bool
	conv    mathConv
}

func (n *mathInline) Kind() ast.NodeKind { return kindMathInline }

func (n *mathInline) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"tex": string(n.tex)}, nil)
}

// mathBlock is display math; its lines hold the TeX. closed is set on a
// one-line $$x$$, which goldmark still offers the next line.
type mathBlock struct {
	ast.BaseBlock
	closed bool
	conv   mathConv
}

func (n *mathBlock) Kind() ast.NodeKind { return kindMathBlock }
func (n *mathBlock) IsRaw() bool        { return true }

func (n *mathBlock) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// mathExtension adds the parsers, the ```math transformer and the MathML
// renderer to a goldmark.
type mathExtension struct{}

func (mathExtension) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		// Before the fenced code block (700), after nothing that a
		// line starting with $$ could otherwise be.
		parser.WithBlockParsers(util.Prioritized(mathBlockParser{}, 650)),
		parser.WithInlineParsers(util.Prioritized(mathInlineParser{}, 150)),
		parser.WithASTTransformers(util.Prioritized(mathFences{}, 100)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(mathRenderer{}, 100)))
}

// mathInlineParser reads $...$, $`...`$ and $$...$$ within a paragraph.
type mathInlineParser struct{}

func (mathInlineParser) Trigger() []byte { return []byte{'$'} }

// unclosedKey holds a parse's *unclosed.
var unclosedKey = parser.NewContextKey()

// unclosed remembers, for each form of opening ($, $$, $`), the end of
// the last paragraph in which an opening found no closing: a later
// opening of the same form there cannot find one either, as whether a $
// closes does not depend on where the math opened. Without it a line of
// "$5 " was scanned to its end from every dollar: 256 KiB took 17 s.
type unclosed [3]int

// Parse reads math from the opening at the reader to its closing, which
// may be on a later line of the paragraph (a soft break in the TeX).
func (mathInlineParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, _ := block.PeekLine()
	if block.PrecendingCharacter() == '>' && len(line) > 1 && line[1] == '<' {
		return nil
	}
	u, _ := pc.Get(unclosedKey).(*unclosed)
	if u == nil {
		u = &unclosed{-1, -1, -1}
		pc.Set(unclosedKey, u)
	}
	end := -1
	if lines := parent.Lines(); lines != nil && lines.Len() > 0 {
		end = lines.At(lines.Len() - 1).Stop
	}
	form := openingForm(line)
	if end >= 0 && u[form] == end {
		return nil
	}
	l, pos := block.Position()
	// buf is the line itself until the math runs past it: copying the
	// rest of a long line for every opening was quadratic.
	buf, copied := line, false
	from := 0
	for lineNo := l; ; lineNo++ {
		tex, n, display, none := scanInlineMath(buf, from)
		if n > 0 {
			block.SetPosition(l, pos)
			advance(block, n)
			return &mathInline{tex: unixLines(tex), display: display}
		}
		block.AdvanceLine()
		next, _ := block.PeekLine()
		if at, _ := block.Position(); at != lineNo+1 {
			next = nil // the reader was on its last line
		}
		if !none || next == nil {
			if none && end >= 0 {
				u[form] = end
			}
			block.SetPosition(l, pos)
			return nil
		}
		from = len(buf)
		if !copied {
			buf, copied = bytes.Clone(buf), true
		}
		buf = append(buf, next...)
	}
}

// advance moves the reader n bytes on, across line ends.
func advance(block text.Reader, n int) {
	for n > 0 {
		line, _ := block.PeekLine()
		if line == nil {
			return
		}
		if n < len(line) {
			block.Advance(n)
			return
		}
		n -= len(line)
		block.AdvanceLine()
	}
}

// openingForm numbers the forms of opening: $, $$ and $`.
func openingForm(line []byte) int {
	switch {
	case bytes.HasPrefix(line, []byte("$`")):
		return 2
	case bytes.HasPrefix(line, []byte("$$")):
		return 1
	}
	return 0
}

// scanInlineMath returns the TeX of the math s starts with, how many
// bytes it takes, and whether it is display math; n is 0 when s does not
// start with math, and unclosed then says s holds no closing for its
// opening. The search for the closing starts at from, where a previous
// call on a shorter s, at a line's end, left off.
func scanInlineMath(s []byte, from int) (tex []byte, n int, display, unclosed bool) {
	switch {
	case bytes.HasPrefix(s, []byte("$`")):
		at := max(2, from-1)
		end := bytes.Index(s[at:], []byte("`$"))
		if end < 0 {
			return nil, 0, false, true
		}
		if end += at - 2; end == 0 {
			return nil, 0, false, false
		}
		return s[2 : 2+end], end + 4, false, false
	case bytes.HasPrefix(s, []byte("$$")):
		at := max(2, from)
		end := closingDollars(s[at:])
		if end < 0 {
			return nil, 0, false, true
		}
		if end += at - 2; end == 0 {
			return nil, 0, false, false
		}
		return s[2 : 2+end], end + 4, true, false
	}
	if len(s) < 3 || isSpace(s[1]) || s[1] == '$' {
		return nil, 0, false, false
	}
	for i := max(1, from); i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '$':
			next := byte(0)
			if i+1 < len(s) {
				next = s[i+1]
			}
			if isSpace(s[i-1]) || next >= '0' && next <= '9' || s[i-1] == '>' && next == '<' {
				continue
			}
			return s[1:i], i + 1, false, false
		}
	}
	return nil, 0, false, true
}

// closingDollars returns where in s the first unescaped $$ starts, or -1.
func closingDollars(s []byte) int {
	for i := 0; i+1 < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case s[i] == '$' && s[i+1] == '$':
			return i
		}
	}
	return -1
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// mathBlockParser reads a $$ block: $$x$$ alone on a line, or $$ alone on
// the lines before and after the TeX, with no blank line between.
type mathBlockParser struct{}

func (mathBlockParser) Trigger() []byte { return []byte{'$'} }

func (mathBlockParser) Open(_ ast.Node, reader text.Reader, _ parser.Context) (ast.Node, parser.State) {
	line, seg := reader.PeekLine()
	pos, _ := util.IndentWidth(line, reader.LineOffset())
	if pos > 3 {
		return nil, parser.NoChildren
	}
	rest := util.TrimRightSpace(util.TrimLeftSpace(line))
	if !bytes.HasPrefix(rest, []byte("$$")) {
		return nil, parser.NoChildren
	}
	node := &mathBlock{}
	start := seg.Start + bytes.Index(line, []byte("$$")) + 2
	body := rest[2:]
	if len(body) == 0 {
		reader.AdvanceToEOL()
		return node, parser.NoChildren
	}
	end := closingDollars(body)
	if end < 0 || end+2 != len(body) || len(util.TrimLeftSpace(body[:end])) == 0 {
		return nil, parser.NoChildren // $$ with text after it: a paragraph's
	}
	node.Lines().Append(text.NewSegment(start, start+end))
	node.closed = true
	reader.AdvanceToEOL()
	return node, parser.NoChildren
}

func (mathBlockParser) Continue(node ast.Node, reader text.Reader, _ parser.Context) parser.State {
	line, seg := reader.PeekLine()
	// A blank line ends the block, as in pandoc, where display math holds
	// none: a document parsed in parts is cut after blank lines, and a
	// block running on across one gave render-fpdf another tree.
	if line == nil || node.(*mathBlock).closed || util.IsBlank(line) {
		return parser.Close
	}
	if bytes.Equal(util.TrimRightSpace(util.TrimLeftSpace(line)), []byte("$$")) {
		reader.AdvanceToEOL()
		return parser.Close
	}
	node.Lines().Append(seg)
	reader.AdvanceToEOL()
	return parser.Continue | parser.NoChildren
}

func (mathBlockParser) Close(ast.Node, text.Reader, parser.Context) {}
func (mathBlockParser) CanInterruptParagraph() bool                 { return true }
func (mathBlockParser) CanAcceptIndentedLine() bool                 { return false }

// mathFences turns ```math fenced code blocks into math blocks.
type mathFences struct{}

func (mathFences) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	var fences []*ast.FencedCodeBlock
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if f, ok := n.(*ast.FencedCodeBlock); ok {
			if lang := f.Language(src); bytes.Equal(lang, []byte("math")) {
				fences = append(fences, f)
			}
			return ast.WalkSkipChildren, nil
		}
		if n.Type() == ast.TypeInline {
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	for _, f := range fences {
		m := &mathBlock{}
		m.SetLines(f.Lines())
		f.Parent().ReplaceChild(f.Parent(), f, m)
	}
}

// mathTeX returns the TeX of a math block.
func mathTeX(n *mathBlock, src []byte) []byte {
	var b []byte
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b = append(b, seg.Value(src)...)
	}
	return bytes.TrimRight(unixLines(b), "\n")
}

// unixLines returns a copy of tex with each "\r\n" line end as "\n": a
// document written on Windows has them, and each "\r" went into the
// formula's text, which a reader copies and speaks.
func unixLines(tex []byte) []byte {
	return bytes.ReplaceAll(tex, []byte("\r\n"), []byte("\n"))
}

var (
	_ parser.InlineParser   = mathInlineParser{}
	_ parser.BlockParser    = mathBlockParser{}
	_ parser.ASTTransformer = mathFences{}
	_ goldmark.Extender     = mathExtension{}
)
