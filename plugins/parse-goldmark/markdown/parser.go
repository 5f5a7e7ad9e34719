package markdown

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/yuin/goldmark"
	emoji "github.com/yuin/goldmark-emoji"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Name and Version identify the plugin.
const (
	Name    = "parse-goldmark"
	Version = "0.1.0"
)

// Parser is the goldmark parse stage. It is safe for concurrent use.
type Parser struct {
	log *slog.Logger
	md  goldmark.Markdown
	cfg atomic.Pointer[Config]
	// parts are the sizes ParseParts cuts the source at.
	parts partSizes
	// running holds a place for each parse under way. goldmark cannot be
	// stopped, so a parse whose request was given up still runs to its
	// end; the bound keeps such parses from piling up past the cores while
	// their clients' places in the host go to new requests.
	running chan struct{}
}

// New returns a parser with the default configuration.
func New(log *slog.Logger) *Parser {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	useMathLog(log)
	p := &Parser{
		log:     log,
		parts:   partSizes{first: firstPart, max: maxPart},
		running: make(chan struct{}, runtime.GOMAXPROCS(0)),
		md: goldmark.New(
			// GitHub turns :rocket: into the character, outside code, so
			// both backends get it: the HTML as the character itself, the
			// tree as text.
			goldmark.WithExtensions(extension.GFM, extension.Footnote,
				emoji.New(emoji.WithRenderingMethod(emoji.Unicode)), mathExtension{}),
			goldmark.WithParserOptions(
				parser.WithAutoHeadingID(),
				parser.WithASTTransformers(util.Prioritized(taskClasses{}, 1000), util.Prioritized(alerts{}, 1000)),
			),
			goldmark.WithRendererOptions(html.WithUnsafe(),
				renderer.WithNodeRenderers(util.Prioritized(dirAuto{}, 100))),
		),
	}
	cfg := DefaultConfig()
	p.cfg.Store(&cfg)
	return p
}

// Configure applies the plugin's config block.
func (p *Parser) Configure(_ context.Context, req *stage.ConfigureRequest) (*stage.ConfigureResponse, error) {
	cfg, err := ParseConfig(req.Config)
	if err != nil {
		return nil, err
	}
	p.cfg.Store(&cfg)
	p.log.Info("parser configured", "maxDepth", cfg.MaxDepth, "maxNodes", cfg.MaxNodes)
	return &stage.ConfigureResponse{Info: stage.Info{Name: Name, Version: Version}}, nil
}

// Health reports the parser healthy: it holds no resources that can fail.
func (p *Parser) Health(context.Context) error { return nil }

// Close releases nothing; it exists for the plugin lifecycle.
func (p *Parser) Close() error { return nil }

// Parse turns Markdown into the HTML body fragment, the document tree, the
// title and the outline. goldmark cannot be interrupted, so the context is
// checked between the phases; defuse keeps each phase roughly linear in the
// input, and measure refuses what would still cost too much.
func (p *Parser) Parse(ctx context.Context, req *stage.ParseRequest) (*stage.ParseResponse, error) {
	src, fm, cfg, release, err := p.admit(ctx, req)
	if err != nil {
		return nil, err
	}
	defer release()
	doc := p.md.Parser().Parse(text.NewReader(src), parser.WithContext(parser.NewContext(parser.WithIDs(newSlugs()))))
	if err := ctx.Err(); err != nil {
		return nil, ctxError(err)
	}
	budget := newMathBudget(ctx)
	if usesLabels(src) {
		budget.labels = mathLabels(ctx, doc, src)
	}
	doc.OwnerDocument().SetAttribute(mathBudgetAttr, budget)
	root, err := convert(ctx, fm, doc, src, cfg)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if !req.SkipHTML { // a tree renderer never reads the HTML
		out.Grow(len(src) + len(src)/2)
		if fm != nil {
			fm.writeHTML(&out)
		}
		// The HTML copies reused link definitions as the tree does, and
		// under the same budget.
		budget := outputBudget(len(src))
		if err := p.md.Renderer().Render(&limitedWriter{w: &out, left: budget}, src, doc); err != nil {
			if errors.Is(err, errOutputFull) {
				return nil, errTooMuchOutput(budget)
			}
			return nil, stage.Wrap(stage.CodeInternal, err, "render markdown to html")
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxError(err)
	}
	title, headings := outline(root)
	if fm != nil && fm.title != "" {
		title = fm.title
	}
	return &stage.ParseResponse{Document: stage.Document{
		HTML:    out.String(),
		Root:    root,
		Title:   title,
		Outline: headings,
	}}, nil
}

// admit returns the source as goldmark will read it, once its front
// matter is cut off and it is defused, the front matter or nil, and the
// configuration it is parsed under, or why it is not parsed at all. It
// waits for a place to parse in (see running), which release gives back.
func (p *Parser) admit(ctx context.Context, req *stage.ParseRequest) (src []byte, fm *frontMatter, cfg Config, release func(), err error) {
	cfg = *p.cfg.Load()
	if err := ctx.Err(); err != nil {
		return nil, nil, cfg, nil, ctxError(err)
	}
	// A byte order mark opens files saved by Windows editors; goldmark
	// read it as text, so "# Title" was a paragraph that printed "# Title".
	// cmark and GitHub drop it.
	// The front matter is cut off first, so that no part of the document
	// and no limit below sees it (see frontmatter.go).
	fm, src = splitFrontMatter([]byte(strings.TrimPrefix(req.Markdown, "\ufeff")))
	src = defuse(src, lineMarkers, lineIndent)
	if err := measure(src).check(cfg.MaxNodes); err != nil {
		return nil, nil, cfg, nil, err
	}
	select {
	case p.running <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, cfg, nil, ctxError(ctx.Err())
	}
	// The wait may have outlived a request given up meanwhile.
	if err := ctx.Err(); err != nil {
		<-p.running
		return nil, nil, cfg, nil, ctxError(err)
	}
	return src, fm, cfg, func() { <-p.running }, nil
}

// ctxError reports a cancelled or expired context as a stage error.
func ctxError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return stage.Wrap(stage.CodeTimeout, err, "parse ran past its deadline")
	}
	return stage.Wrap(stage.CodeTimeout, err, "parse cancelled")
}

var _ stage.Parser = (*Parser)(nil)
var _ stage.Plugin = (*Parser)(nil)

// limitedWriter fails once more than left bytes are written to it.
type limitedWriter struct {
	w    io.Writer
	left int
}

var errOutputFull = errors.New("output budget spent")

func (l *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > l.left {
		return 0, errOutputFull
	}
	l.left -= len(p)
	return l.w.Write(p)
}
