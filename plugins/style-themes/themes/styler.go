package themes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Name and Version identify the plugin.
const (
	Name    = "style-themes"
	Version = "0.1.0"
)

// Styler is the style stage. It is safe for concurrent use.
type Styler struct {
	log    *slog.Logger
	themes atomic.Pointer[map[string]*theme]
}

// New returns a styler with the built-in themes.
func New(log *slog.Logger) *Styler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Styler{log: log}
	b := builtins()
	s.themes.Store(&b)
	return s
}

// Config is the plugin's config block.
type Config struct {
	// ThemesDir holds operator themes; empty for the built-ins only.
	ThemesDir string `json:"themesDir"`
}

// Configure applies the config block: it loads the operator themes.
func (s *Styler) Configure(_ context.Context, req *stage.ConfigureRequest) (*stage.ConfigureResponse, error) {
	var cfg Config
	if len(bytes.TrimSpace(req.Config)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(req.Config))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return nil, stage.Wrap(stage.CodeInvalid, err, "style-themes config: "+describe(err))
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, stage.Errorf(stage.CodeInvalid, "style-themes config: trailing data after the object")
		}
	}
	themes := builtins()
	if cfg.ThemesDir != "" {
		loaded, err := loadDir(cfg.ThemesDir, themes)
		if err != nil {
			return nil, stage.Wrap(stage.CodeInvalid, err, "style-themes config: themesDir: "+err.Error())
		}
		themes = loaded
	}
	s.themes.Store(&themes)
	s.log.Info("themes loaded", "themes", strings.Join(names(themes), ","), "themesDir", cfg.ThemesDir)
	return &stage.ConfigureResponse{Info: stage.Info{Name: Name, Version: Version}}, nil
}

// describe turns a decoding error into a message that names the key.
func describe(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		if typeErr.Field == "" {
			return "the block must be a JSON object"
		}
		return "key " + typeErr.Field + " must be a " + typeErr.Type.String()
	}
	if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown key " + key
	}
	return "invalid JSON: " + err.Error()
}

// Health reports the styler healthy: it holds no resources that can fail.
func (s *Styler) Health(context.Context) error { return nil }

// Close releases nothing; it exists for the plugin lifecycle.
func (s *Styler) Close() error { return nil }

// Themes lists the theme names in order.
func (s *Styler) Themes() []string { return names(*s.themes.Load()) }

func (s *Styler) theme(name string) (*theme, error) {
	themes := *s.themes.Load()
	if t, ok := themes[name]; ok {
		return t, nil
	}
	return nil, &stage.Error{
		Code:    stage.CodeInvalid,
		Message: "unknown theme " + strconv.Quote(name) + "; known: " + strings.Join(names(themes), ", "),
		Details: map[string]string{"field": "theme", "allowed": strings.Join(names(themes), ",")},
	}
}

// Tokens returns a theme's values for a page, for backends that do not
// apply CSS; the CSS of Style is written from the same values.
func (s *Styler) Tokens(themeName string, page stage.PageSize) (stage.Tokens, error) {
	t, err := s.theme(themeName)
	if err != nil {
		return stage.Tokens{}, err
	}
	page, err = checkPage(page)
	if err != nil {
		return stage.Tokens{}, err
	}
	return t.design.fit(t.name, page).Tokens, nil
}

// Style builds the complete HTML document; see the package comment for
// the order of its CSS.
func (s *Styler) Style(ctx context.Context, req *stage.StyleRequest) (*stage.StyleResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, stage.Wrap(stage.CodeTimeout, err, "style cancelled")
	}
	t, err := s.theme(req.Theme)
	if err != nil {
		return nil, err
	}
	page, err := checkPage(req.Page)
	if err != nil {
		return nil, err
	}
	// An empty numbering is none: choosing the public default (center) is
	// the request decoder's business, not the styler's.
	numbering := req.Numbering
	if numbering == "" {
		numbering = stage.NumberingNone
	}
	if _, ok := marginBoxes[numbering]; !ok && numbering != stage.NumberingNone {
		return nil, &stage.Error{
			Code:    stage.CodeInvalid,
			Message: "unknown page numbering " + strconv.Quote(string(numbering)),
			Details: map[string]string{"field": "pageNumeration", "allowed": "none,left,center,right"},
		}
	}
	fit := t.design.fit(t.name, page)
	if req.SkipHTML {
		// The renderer lays out the tree with the tokens alone.
		return &stage.StyleResponse{Tokens: fit.Tokens}, nil
	}
	userStyles, body := extractStyles(req.Document.HTML)
	body = highlightCode(body, fit.CodePalette)

	var b strings.Builder
	b.Grow(len(body) + len(t.css) + 8<<10)
	// The lang attribute is always written: without one Chromium tags the
	// PDF with its own locale (/Lang en-US) whatever the text, while an
	// empty one, HTML's "unknown", leaves /Lang out.
	b.WriteString("<!DOCTYPE html>\n<html lang=\"")
	b.WriteString(html.EscapeString(req.Lang))
	b.WriteString("\">\n<head>\n<meta charset=\"utf-8\">\n<title>")
	title := req.Document.Title
	if strings.TrimSpace(title) == "" {
		// Chromium titles a PDF with an empty <title> after its page's
		// address, about:blank, which viewers then show; "document" is
		// the name the PDF's download gets.
		title = "document"
	}
	b.WriteString(html.EscapeString(title))
	b.WriteString("</title>\n<style id=\"mdpress-theme\">\n@layer mdpress-theme {\n")
	writeVars(&b, fit)
	b.WriteString(printCSS)
	writeAlertCSS(&b, fit.AlertColors)
	writePaletteCSS(&b, fit.CodePalette)
	b.WriteString(t.css)
	b.WriteString("\n}\n</style>\n<style id=\"mdpress-page\">\n")
	writePageCSS(&b, fit, page, numbering)
	b.WriteString("</style>\n")
	for _, st := range userStyles {
		b.WriteString(st)
		b.WriteByte('\n')
	}
	b.WriteString("</head>\n<body class=\"mdpress theme-")
	b.WriteString(t.name)
	// No watermark element, whatever req.Watermark says: the renderer
	// draws the mark (render-chrome stamps it into the printed PDF), and
	// an element here would be a second one that the document's CSS can
	// hide.
	b.WriteString("\">\n<main class=\"markdown-body\">\n")
	b.WriteString(body)
	b.WriteString("\n</main>\n</body>\n</html>\n")
	return &stage.StyleResponse{HTML: b.String(), Tokens: fit.Tokens}, nil
}

// printCSS is written ahead of every theme's stylesheet, an operator's
// too, inside the theme's layer so that a document's own CSS still wins.
//
// A closed <details> shows only its summary, and a PDF cannot be clicked
// open: what a reader on GitHub unfolds would be missing from the page,
// and render-fpdf, which reads no CSS, prints it.
//
// A <sup> with an id is a link target (goldmark's footnote references,
// which the notes' ↩ lead back to). Chromium writes no destination for a
// target whose box starts above the page's content, and a raised sup
// whose line-height is 0 (the themes' rule, which keeps it from spreading
// its line) reaches above its line: on the document's first line, with
// the body's margin at 0, that is above the page, and its ↩ led nowhere.
// As an inline-block its box is its line-height's, 0, at its raised
// baseline, inside the line; its glyphs move by under 0.3 pt, and no
// other glyph moves.
//
// Math (parse-goldmark's MathML) needs a font with an OpenType MATH
// table: in the body's font Chromium draws no radical sign and sets a
// display sum at text size. DejaVu Math TeX Gyre comes with
// fonts-dejavu-extra; the fallback, Noto Sans Math (fonts-noto-core),
// draws the radical but keeps the display sum small. Chromium breaks no
// line inside a <math> (parse-goldmark cuts inline formulas where TeX
// may break them): one still wider than the text, inside \left( ...
// \right) say, is cut at the margin, as a display formula is, rather
// than Chromium shrinking every page of the document to fit it.
//
// GitHub's alerts (parse-goldmark writes GitHub's HTML): the theme's
// colour of each kind (AlertColors, GitHub's unless a design says
// otherwise) as --md-alert, which the themes draw the bar and title in;
// the octicon at the title's size; and the title on the alert's side,
// since it keeps GitHub's dir="auto" and would otherwise follow its
// English word rather than the alert's content. Here rather than in each
// theme, so that an operator's theme gets them too.
const printCSS = "details::details-content { content-visibility: visible; }\n" +
	"sup[id] { display: inline-block; }\n" +
	"math { font-family: \"DejaVu Math TeX Gyre\", \"Noto Sans Math\", math; }\n" +
	".math-display { margin: 0.75em 0; overflow-x: hidden; }\n" +
	"math:not([display=block]) { max-width: 100%; overflow-x: clip; }\n"

// alertCSS follows the alerts' colours, written from the tokens by
// writeAlertCSS so that render-fpdf, which reads the tokens, draws the
// same colours.
const alertCSS = ".markdown-alert-title .octicon { width: 1em; height: 1em; margin-inline-end: 0.5em; vertical-align: -0.125em; fill: currentColor; }\n" +
	".markdown-alert:dir(rtl) > .markdown-alert-title { text-align: right; }\n"

// writeAlertCSS writes each alert kind's colour as --md-alert.
func writeAlertCSS(b *strings.Builder, a stage.AlertColors) {
	for _, kind := range [...]struct{ name, colour string }{
		{"note", a.Note}, {"tip", a.Tip}, {"important", a.Important}, {"warning", a.Warning}, {"caution", a.Caution},
	} {
		b.WriteString(".markdown-alert-")
		b.WriteString(kind.name)
		b.WriteString(" { --md-alert: ")
		b.WriteString(kind.colour)
		b.WriteString("; }\n")
	}
	b.WriteString(alertCSS)
}

// maxPagePt is the largest page side PDF allows (200 in).
const maxPagePt = 14400

// checkPage returns the page, A4 for a zero one, or an error for a size
// no page can have.
func checkPage(p stage.PageSize) (stage.PageSize, error) {
	if p.WidthPt == 0 && p.HeightPt == 0 {
		a4, _ := papers.Lookup(papers.Default)
		return a4, nil
	}
	for _, v := range []float64{p.WidthPt, p.HeightPt} {
		if math.IsNaN(v) || v < 36 || v > maxPagePt {
			return p, stage.Errorf(stage.CodeInvalid, "page size %gx%g pt is outside 36..%d pt", p.WidthPt, p.HeightPt, maxPagePt)
		}
	}
	return p, nil
}

var _ stage.Styler = (*Styler)(nil)
var _ stage.Plugin = (*Styler)(nil)
