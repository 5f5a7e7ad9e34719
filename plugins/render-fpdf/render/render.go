// Package render is the render-fpdf plugin: it lays out the parser's
// document tree with embedded DejaVu fonts and draws it with fpdf, styled by
// the theme's tokens. It needs no browser and reads no file at run time.
package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"runtime/debug"
	"sync"
	"time"

	"golang.org/x/text/language"

	"github.com/mdpress/mdpress/plugins/render-fpdf/emoji"
	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
	"github.com/mdpress/mdpress/plugins/render-fpdf/layout"
	"github.com/mdpress/mdpress/plugins/render-fpdf/paint"
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Name and Version describe the plugin.
const (
	Name    = "render-fpdf"
	Version = "1.0.0"
)

// maxSidePt is the largest page side PDF readers accept (200 in).
const maxSidePt = 14400

// Renderer renders documents to PDF with fpdf.
type Renderer struct {
	log *slog.Logger
	now func() time.Time

	// system are the fallback fonts used when the config names none.
	system []FallbackFont

	mu  sync.RWMutex
	cfg Config
	// fonts are the DejaVu faces, parsed once per process; set adds the
	// configured fallback fonts to them (nil before Configure).
	fonts  *fonts.Set
	set    *fonts.Set
	closed bool

	// emojiPath is the colour emoji font's file (emoji.go); emoji is the
	// font, read at Configure (nil without one): a render before it reads
	// no file, as it reads no fallback font.
	emojiPath string
	emoji     *emoji.Font
}

// Option configures a Renderer.
type Option func(*Renderer)

// WithClock sets the clock that dates documents.
func WithClock(now func() time.Time) Option { return func(r *Renderer) { r.now = now } }

// WithFonts shares an already loaded font set, so that several renderers in
// one process (tests, benchmarks) parse the fonts once.
func WithFonts(s *fonts.Set) Option { return func(r *Renderer) { r.fonts = s } }

// New returns a Renderer with the default configuration. It does no work:
// fonts are parsed by Configure, or by the first Render.
func New(log *slog.Logger, opts ...Option) *Renderer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Renderer{log: log, now: time.Now, cfg: defaults(), system: SystemFallbacks, emojiPath: SystemEmoji}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Configure applies the plugin's config block and parses the fonts, the
// fallback fonts included: they are never read again.
func (r *Renderer) Configure(ctx context.Context, req *stage.ConfigureRequest) (*stage.ConfigureResponse, error) {
	cfg, err := parseConfig(req.Config)
	if err != nil {
		return nil, err
	}
	base, err := r.fontSet()
	if err != nil {
		return nil, stage.Wrap(stage.CodeInternal, err, "render-fpdf: fonts failed to load")
	}
	paths, configured := r.fallbackPaths(cfg)
	set, err := withFallbacks(base, paths)
	if err != nil {
		return nil, err
	}
	emojiFont := r.emojiFont()
	r.mu.Lock()
	r.cfg = cfg
	r.set = set
	r.emoji = emojiFont
	r.closed = false
	r.mu.Unlock()
	r.log.Info("render-fpdf configured", "compress", cfg.Compress, "maxPages", cfg.MaxPages)
	if emojiFont != nil {
		r.log.Info("render-fpdf draws emoji from the colour emoji font", "path", r.emojiPath)
	} else {
		r.log.Info("render-fpdf has no colour emoji font: emoji are drawn as U+FFFD", "path", r.emojiPath)
	}
	switch {
	case len(paths) > 0:
		r.log.Info("render-fpdf fallback fonts in use", "fallbackFonts", paths, "configured", configured)
	default:
		r.log.Info("render-fpdf has no fallback fonts: characters DejaVu lacks (CJK) are drawn as U+FFFD",
			"configured", configured, "systemFallbacks", r.system)
	}
	return &stage.ConfigureResponse{Info: stage.Info{Name: Name, Version: Version, Capabilities: []string{stage.CapReadsTree, stage.CapReadsTreeParts}}}, nil
}

// Health reports whether the fonts are loaded.
func (r *Renderer) Health(ctx context.Context) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.fonts == nil {
		return stage.Errorf(stage.CodeUnavailable, "render-fpdf: fonts not loaded")
	}
	return nil
}

// Close releases nothing but marks the renderer closed; it is idempotent.
func (r *Renderer) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	return nil
}

// fontSet returns the parsed fonts, parsing them on first use.
func (r *Renderer) fontSet() (*fonts.Set, error) {
	r.mu.RLock()
	s := r.fonts
	r.mu.RUnlock()
	if s != nil {
		return s, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fonts == nil {
		start := time.Now()
		set, err := fonts.Load()
		if err != nil {
			return nil, err
		}
		r.fonts = set
		r.log.Debug("fonts parsed", "took", time.Since(start).Round(time.Millisecond).String())
	}
	return r.fonts, nil
}

// Render lays out and draws the document tree.
func (r *Renderer) Render(ctx context.Context, req *stage.RenderRequest) (*stage.RenderResponse, error) {
	return r.render(ctx, req, func(opt layout.Options) (*layout.Doc, string, error) {
		doc, err := layout.Layout(ctx, req.Document.Root, opt)
		if err != nil {
			return nil, "", layoutError(err, opt.MaxPages)
		}
		return doc, req.Document.Title, nil
	})
}

// RenderParts lays out each part of the tree as it arrives, so the layout
// of the first pages overlaps the parse of the rest. The PDF is the one
// Render makes of the parts joined. An error from parts is returned as it
// is: it is the parse's, passed through by the host.
func (r *Renderer) RenderParts(ctx context.Context, req *stage.RenderRequest, parts stage.Parts) (*stage.RenderResponse, error) {
	if parts == nil {
		return nil, stage.Errorf(stage.CodeInvalid, "render in parts without parts")
	}
	return r.render(ctx, req, func(opt layout.Options) (*layout.Doc, string, error) {
		s, err := layout.Begin(ctx, opt)
		if err != nil {
			return nil, "", layoutError(err, opt.MaxPages)
		}
		for {
			// Checked here too, so that a cancelled render reads no further
			// part and fails as Render does, not with whatever Next makes of
			// the cancellation.
			if err := ctx.Err(); err != nil {
				return nil, "", layoutError(err, opt.MaxPages)
			}
			p, err := parts.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, "", err
			}
			if p.Root == nil {
				if len(p.Encoded) > 0 { // the SDK decodes parts for plugins
					return nil, "", stage.Errorf(stage.CodeInternal, "render-fpdf: a part came encoded")
				}
				continue
			}
			// A page limit passed here fails now, before the rest is read.
			if err := s.Add(p.Root.Children); err != nil {
				return nil, "", layoutError(err, opt.MaxPages)
			}
		}
		doc, err := s.End()
		if err != nil {
			return nil, "", layoutError(err, opt.MaxPages)
		}
		title := req.Document.Title
		if title == "" {
			title = parts.Rest().Title
		}
		return doc, title, nil
	})
}

// render checks the request, lays it out with lay and paints the result.
// lay returns stage errors; it gets the options every layout uses.
func (r *Renderer) render(ctx context.Context, req *stage.RenderRequest,
	lay func(layout.Options) (doc *layout.Doc, title string, err error)) (resp *stage.RenderResponse, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.ErrorContext(ctx, "render panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			resp, err = nil, stage.Wrap(stage.CodeInternal, fmt.Errorf("panic: %v", p), "render failed")
		}
	}()
	start := time.Now()
	r.mu.RLock()
	cfg, closed, set, emojiFont := r.cfg, r.closed, r.set, r.emoji
	r.mu.RUnlock()
	if closed {
		return nil, stage.Errorf(stage.CodeUnavailable, "render-fpdf is closed")
	}
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	lang, err := checkLang(req.Lang)
	if err != nil {
		return nil, err
	}
	if set == nil { // not configured: DejaVu alone, as no file is read here
		if set, err = r.fontSet(); err != nil {
			return nil, stage.Wrap(stage.CodeInternal, err, "render failed")
		}
	}
	numbering := req.Numbering
	if numbering == "" { // the public contract's default
		numbering = stage.NumberingCenter
	}
	log := r.log
	if id := sdkplugin.RequestID(ctx); id != "" {
		// The layout logs without the call's context (a formula printed
		// as source, emoji past their bound): its lines name the request.
		log = log.With("requestId", id)
	}
	doc, title, err := lay(layout.Options{
		Page: req.Page, Tokens: req.Tokens, Fonts: set, Emoji: emojiFont, Log: log, MaxPages: cfg.MaxPages,
	})
	if err != nil {
		return nil, err
	}
	pdf, err := paint.Paint(ctx, doc, paint.Options{
		Fonts: set, Title: title, Numbering: numbering, Watermark: req.Watermark, Lang: lang,
		Compress: cfg.Compress, Now: r.now(),
	})
	if err != nil {
		return nil, layoutError(err, cfg.MaxPages)
	}
	r.log.DebugContext(ctx, "rendered", "pages", len(doc.Pages), "bytes", len(pdf), "took", time.Since(start).Round(10*time.Microsecond).String())
	return &stage.RenderResponse{PDF: pdf, Pages: len(doc.Pages)}, nil
}

func checkRequest(req *stage.RenderRequest) error {
	if req == nil {
		return stage.Errorf(stage.CodeInvalid, "empty render request")
	}
	w, h := req.Page.WidthPt, req.Page.HeightPt
	if !(w >= 36 && h >= 36 && w <= maxSidePt && h <= maxSidePt) || math.IsNaN(w) || math.IsNaN(h) {
		return stage.Errorf(stage.CodeInvalid, "page size %q (%gx%g pt) is outside 36..%d pt", req.Page.Name, w, h, maxSidePt)
	}
	switch req.Numbering {
	case "", stage.NumberingNone, stage.NumberingLeft, stage.NumberingCenter, stage.NumberingRight:
	default:
		return stage.Errorf(stage.CodeInvalid, "unknown page numbering %q", req.Numbering)
	}
	return nil
}

// checkLang returns lang in its canonical form. The host sends it so
// already, but fpdf writes it into the PDF unescaped, and a plugin's caller
// need not be the host: anything that is not a tag is refused.
func checkLang(lang string) (string, error) {
	if lang == "" {
		return "", nil
	}
	tag, err := language.Parse(lang)
	if err != nil {
		return "", stage.Errorf(stage.CodeInvalid, "lang %q is not a BCP 47 language tag", lang)
	}
	return tag.String(), nil
}

// layoutError maps a failure to a stage error: the page limit is the
// client's document being too large, deadlines are timeouts, the rest is
// internal.
func layoutError(err error, maxPages int) error {
	switch {
	case errors.Is(err, layout.ErrTooManyPages):
		e := stage.Wrap(stage.CodeTooLarge, err, fmt.Sprintf("document needs more than %d pages", maxPages))
		e.Details = map[string]string{"limit": fmt.Sprintf("%d pages", maxPages)}
		return e
	case errors.Is(err, layout.ErrTooManyLines):
		e := stage.Wrap(stage.CodeTooLarge, err, fmt.Sprintf("document breaks into more than %d lines; "+
			"long words in narrow table columns break into a line per character", layout.MaxLines))
		e.Details = map[string]string{"limit": fmt.Sprintf("%d lines", layout.MaxLines)}
		return e
	case errors.Is(err, layout.ErrTooManyItems):
		e := stage.Wrap(stage.CodeTooLarge, err, fmt.Sprintf("document draws more than %d items "+
			"(text runs, shadings, borders, lines, links)", layout.MaxItems))
		e.Details = map[string]string{"limit": fmt.Sprintf("%d drawing items", layout.MaxItems)}
		return e
	case errors.Is(err, layout.ErrTooManyAtoms):
		e := stage.Wrap(stage.CodeTooLarge, err, fmt.Sprintf("a paragraph or table holds more than %d words, "+
			"spaces and styled runs; split it", layout.MaxBlockAtoms))
		e.Details = map[string]string{"limit": fmt.Sprintf("%d text runs per block", layout.MaxBlockAtoms)}
		return e
	case errors.Is(err, context.DeadlineExceeded):
		return stage.Wrap(stage.CodeTimeout, err, "render timed out")
	case errors.Is(err, context.Canceled):
		return stage.Wrap(stage.CodeTimeout, err, "render cancelled")
	}
	return stage.Wrap(stage.CodeInternal, err, "render failed")
}

var _ stage.PartRenderer = (*Renderer)(nil)
var _ stage.Plugin = (*Renderer)(nil)
