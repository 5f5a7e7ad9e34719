package markdown

import (
	"context"
	"errors"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Part sizes, in bytes of source. The first part is small so that the
// renderer starts laying out at once; each next one is twice the last, up
// to maxPart, so that a 10 KB document comes in about five parts and one
// of 10 MiB in under two hundred rather than in thousands.
const (
	firstPart = 512
	maxPart   = 64 << 10
)

// maxRetries is how many times one document's pieces may be parsed again
// for ending inside a block (see partStream.parse). Real documents need it
// rarely, if ever; input made to need it on every piece would otherwise
// parse twice and replay every heading id kept so far each time.
const maxRetries = 4

// partSizes are the sizes ParseParts cuts at; tests shrink them to cut at
// every line they can.
type partSizes struct{ first, max int }

var _ stage.PartParser = (*Parser)(nil)

// ParseParts parses as Parse does and hands the tree over in parts, each
// as soon as it is built (see stage.PartParser). goldmark cannot hand out
// part of a tree, so the source is cut where goldmark would hold no block
// open but the document (see splitter) and each piece is parsed on its
// own, sharing the heading ids and the tree's limits. The response has no
// tree.
func (p *Parser) ParseParts(ctx context.Context, req *stage.ParseRequest, emit func(stage.Part) error) (*stage.ParseResponse, error) {
	if !req.SkipHTML {
		// The HTML is rendered from goldmark's tree of the whole document,
		// and a renderer that wants the HTML does not read parts.
		return p.parseOnePart(ctx, req, emit)
	}
	src, fm, cfg, release, err := p.admit(ctx, req)
	if err != nil {
		return nil, err
	}
	defer release()
	// One math budget for the document, however many parts and parses
	// it takes: the tree's MathML is converted part by part.
	budget := newMathBudget(ctx)
	if usesLabels(src) {
		// A part may refer to a label further on (see mathlabel.go).
		doc := p.md.Parser().Parse(text.NewReader(src))
		if err := ctx.Err(); err != nil {
			return nil, ctxError(err)
		}
		budget.labels = mathLabels(ctx, doc, src)
	}
	s := p.newStream(ctx, src, cfg, emit, planDefinitions(src), budget)
	s.fm = fm
	err = s.run()
	if errors.Is(err, errRestart) {
		// Nothing has been emitted yet: see partStream.holdTo. The
		// formulas are converted again, within the same time.
		budget = &mathBudget{tex: maxDocMathBytes, out: maxDocMathOut, time: budget.time, ctx: ctx, labels: budget.labels}
		s = p.newStream(ctx, src, cfg, emit, defPlan{whole: true, holdTo: -1}, budget)
		s.fm = fm
		err = s.run()
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxError(err)
	}
	var title string
	switch {
	case fm != nil && fm.title != "":
		title = fm.title
	case len(s.headings) > 0:
		title = s.headings[0].Text
	}
	return &stage.ParseResponse{Document: stage.Document{Title: title, Outline: s.headings}}, nil
}

// parseOnePart parses the whole document and emits its tree as one part.
func (p *Parser) parseOnePart(ctx context.Context, req *stage.ParseRequest, emit func(stage.Part) error) (*stage.ParseResponse, error) {
	res, err := p.Parse(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := emit(stage.Part{Root: res.Document.Root}); err != nil {
		return nil, err
	}
	res.Document.Root = nil
	return res, nil
}

// errRestart: the parts held so far may be wrong, and the document is to
// be parsed again as one part.
var errRestart = errors.New("parse the document as one part")

// partStream parses one document in parts.
type partStream struct {
	ctx   context.Context
	md    parser.Parser
	src   []byte
	sizes partSizes
	emit  func(stage.Part) error
	conv  *converter
	ids   *headingIDs
	split splitter
	whole bool
	// holdTo is where the last line that may define a link reference
	// ends, -1 once passed or if none. A reference resolves across the
	// whole document, forwards too, so parts are held, not emitted, until
	// the part holding that line is parsed; if a definition turns up, the
	// held parts may be missing its links and the document is parsed again
	// as one part.
	holdTo   int
	held     []*stage.Node
	headings []stage.Heading
	parts    int // emitted
	budget   *mathBudget
	retries  int // parses done again because the part ended inside a block
	// fm is the document's front matter, cut off src, or nil: the first
	// part, before any of src.
	fm *frontMatter
}

func (p *Parser) newStream(ctx context.Context, src []byte, cfg Config, emit func(stage.Part) error, plan defPlan, budget *mathBudget) *partStream {
	return &partStream{
		budget: budget,
		ctx:    ctx,
		md:     p.md.Parser(),
		src:    src,
		sizes:  p.parts,
		emit:   emit,
		conv:   newConverter(ctx, cfg, len(src)),
		ids:    newHeadingIDs(),
		split:  splitter{src: src},
		whole:  plan.whole,
		holdTo: plan.holdTo,
	}
}

// run parses and emits every part.
func (s *partStream) run() error {
	if s.fm != nil {
		root := &stage.Node{Kind: stage.KindDocument}
		if err := s.conv.frontMatter(root, s.fm); err != nil {
			return err
		}
		if err := s.deliver(root, 0); err != nil {
			return err
		}
	}
	size := s.sizes.first
	for at := 0; ; {
		end := len(s.src)
		if !s.whole {
			end = s.split.next(s.cutFrom(at, size))
		}
		doc, pc, end, err := s.parse(at, end)
		if err != nil {
			return err
		}
		if len(pc.References()) > 0 && !s.whole {
			if s.holdTo < 0 {
				// planDefinitions missed a definition: a bug, and parts
				// already emitted may lack its links.
				return stage.Wrap(stage.CodeInternal, errors.New("a link reference definition where none was expected"), "internal error")
			}
			return errRestart
		}
		root := &stage.Node{Kind: stage.KindDocument}
		if err := s.conv.document(root, doc, s.src[at:end]); err != nil {
			if s.holdTo >= 0 && s.ctx.Err() == nil {
				// A definition further on may change the tree, and with it
				// whether a limit is crossed.
				return errRestart
			}
			return err
		}
		if err := s.deliver(root, end); err != nil {
			return err
		}
		if end >= len(s.src) {
			return nil
		}
		at, size = end, min(2*size, s.sizes.max)
	}
}

// cutFrom returns where the part starting at at may end: size bytes on,
// or just past the last line that may define a reference, since the held
// parts go out only once the part holding it is parsed.
func (s *partStream) cutFrom(at, size int) int {
	if s.holdTo >= at && s.holdTo < at+size {
		return s.holdTo + 1
	}
	return at + size
}

// parse parses src[at:end] and returns its goldmark tree and context. When
// goldmark ended the piece inside a block that the next line would have
// continued, end moves on and the piece is parsed again.
func (s *partStream) parse(at, end int) (ast.Node, parser.Context, int, error) {
	for {
		if err := s.ctx.Err(); err != nil {
			return nil, nil, 0, ctxError(err)
		}
		pc := parser.NewContext(parser.WithIDs(s.ids))
		doc := s.md.Parse(text.NewReader(s.src[at:end]), parser.WithContext(pc))
		doc.OwnerDocument().SetAttribute(mathBudgetAttr, s.budget)
		if end == len(s.src) || !openAtEnd(doc, end-at) {
			s.ids.commit()
			return doc, pc, end, nil
		}
		s.ids.rollback()
		s.retries++
		// Doubling bounds the work parsed again to the size of the piece,
		// and the cap the pieces parsed again and the ids replayed by
		// rollback: past it, the rest of the document is one piece.
		end = s.split.next(at + 2*(end-at))
		if s.retries >= maxRetries {
			end = len(s.src)
		}
	}
}

// deliver emits a part, or holds it (see holdTo).
func (s *partStream) deliver(root *stage.Node, end int) error {
	s.held = append(s.held, root)
	if end <= s.holdTo {
		return nil
	}
	s.holdTo = -1
	for i, r := range s.held {
		_, hs := outline(r)
		s.headings = append(s.headings, hs...)
		s.held[i] = nil
		s.parts++
		if err := s.emit(stage.Part{Root: r}); err != nil {
			return err
		}
	}
	s.held = s.held[:0]
	return nil
}

// openAtEnd reports whether doc, parsed from n bytes that end with a
// blank line, ends inside a block that only its end marker closes: a
// fenced code block or a raw HTML block of types 1 to 5 takes the blank
// line in as content, where every other block closes before it. Only one
// at the top level can run on: in a container, the line in column 0 that
// starts the next part closes the container and the block with it.
func openAtEnd(doc ast.Node, n int) bool {
	switch b := doc.LastChild(); b.(type) {
	case *ast.FencedCodeBlock, *ast.HTMLBlock:
		lines := b.Lines()
		return lines.Len() > 0 && lines.At(lines.Len()-1).Stop >= n
	}
	return false
}
