package layout

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"math"
	"slices"

	"github.com/mdpress/mdpress/plugins/internal/highlight"
	"github.com/mdpress/mdpress/plugins/render-fpdf/emoji"
	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Options configure a layout.
type Options struct {
	Page   stage.PageSize
	Tokens stage.Tokens
	Fonts  *fonts.Set
	// Emoji is the colour emoji font emoji are drawn from as images; nil
	// draws them as U+FFFD.
	Emoji *emoji.Font
	Log   *slog.Logger
	// MaxPages stops a runaway document; 0 means no limit.
	MaxPages int
	// maxLines, maxItems, maxAtoms and maxMathItems override MaxLines,
	// MaxItems, MaxBlockAtoms and MaxMathItems, for tests.
	maxLines, maxItems, maxAtoms, maxMathItems int
}

// ErrTooManyPages is returned when a document needs more than MaxPages.
var ErrTooManyPages = errors.New("document exceeds the page limit")

// MaxLines bounds the lines a document breaks into, whatever their pages:
// text in table columns a few points wide breaks into a line per
// character, and the lines of a whole table are held before any is placed,
// so a few megabytes of long words in a wide table would otherwise take
// gigabytes well inside the page limit. Ordinary text runs about 50 lines
// a page, a table of 64 narrow columns a few thousand.
const MaxLines = 1_000_000

// ErrTooManyLines is returned when a document breaks into more than
// MaxLines lines.
var ErrTooManyLines = errors.New("document exceeds the line limit")

// MaxItems bounds the drawing items a document is laid out into. Every
// item is held until the document is painted, and painting holds fpdf's
// uncompressed page content beside them, about 1 KB of heap per item
// all told: 450,000 inline code spans in one paragraph (1.8 MB of
// Markdown, 194 pages) drew 900,000 items and took the plugin to 1 GB.
// The 1,000-page benchmark document draws about 95,000, so mixed
// documents of about 2,500 pages fit; dense pages of prose draw a few
// hundred items each.
const MaxItems = 250_000

// ErrTooManyItems is returned when a document draws more than MaxItems
// items.
var ErrTooManyItems = errors.New("document exceeds the drawing item limit")

// MaxBlockAtoms bounds the text runs (words, spaces, pieces of split words)
// of one block: a paragraph or a table is broken into lines only once all
// of its runs are known, so they are all held at once, about 300 bytes
// each with their lines. A table of 440 rows of one-letter cells held
// 440,000 runs and 700 MB before its first row was placed. Ordinary
// paragraphs have a few hundred runs, a table of 5,000 rows of five
// two-word cells 100,000.
const MaxBlockAtoms = 200_000

// ErrTooManyAtoms is returned when a block breaks into more than
// MaxBlockAtoms text runs.
var ErrTooManyAtoms = errors.New("block exceeds the text run limit")

// Limits that keep hostile trees from costing more than their size: past
// maxDepth containers are no longer recursed into (their text is still
// laid out), and indentation stops growing once the text column would
// shrink below minColumn of its full width.
const (
	maxDepth  = 48
	minColumn = 0.4
	eps       = 0.01
)

// abort unwinds a layout that has to stop (page limit, cancelled context).
type abort struct{ err error }

// Layout lays out the tree rooted at root: a Stream given all its blocks at
// once, so that a tree laid out whole and one laid out in parts take the
// same path.
func Layout(ctx context.Context, root *stage.Node, opt Options) (*Doc, error) {
	s, err := Begin(ctx, opt)
	if err != nil {
		return nil, err
	}
	if root != nil {
		if err := s.Add(root.Children); err != nil {
			return nil, err
		}
	}
	return s.End()
}

type engine struct {
	ctx context.Context
	// highlight is what is left of the document's code highlighting, for
	// the goroutines lexAhead starts; ahead holds their results until the
	// layout reaches each block, and lexDone is closed when the last has
	// finished.
	highlight *highlight.Budget
	ahead     map[*stage.Node]*lexed
	lexDone   chan struct{}
	th        theme
	fonts     *fonts.Set
	log       *slog.Logger
	max       int
	doc       *Doc

	page   *Page
	pageNo int
	y      float64
	x0, x1 float64
	top    float64
	bottom float64
	gap    float64 // vertical space owed before the next block

	depth     int
	listDepth int
	tight     bool
	// itemDepth is the depth of the blocks directly in the list item
	// being laid out (0: none), which CSS spaces as li > p and li > ul.
	itemDepth int
	rtl       bool    // the text is right to left (see direction.go)
	inherit   bool    // blocks follow the direction of their list or quote
	color     RGB     // text colour of the current container
	italic    bool    // the current container's text is italic (a quote's)
	scale     float64 // text size factor of the current container

	markers  []marker
	trackers []*tracker
	images   map[string]imageRef
	// emoji draws emoji; emojiImages are the images of its glyphs
	// embedded so far (by glyph id), emojiBoxes their metrics;
	// emojiRuns what emoji atoms draw, those of one glyph by glyph id in
	// glyphRuns, those of the sequences shaped so far in seqRuns (-1:
	// nothing); glyphBuf is the shaper's reused output.
	emoji       *emoji.Font
	emojiImages map[uint16]int
	emojiBoxes  map[int]emojiBox
	emojiRuns   []emojiRun
	glyphRuns   map[uint16]int
	seqRuns     map[string]int
	glyphBuf    []uint16
	emojiCapped bool // MaxEmojiImages reached, and logged
	// maths are the formulas laid out so far, which formula atoms refer
	// to; the parser's budget of MathML a document bounds them.
	maths []mathRef
	// mathItems counts the items the formulas laid out so far draw,
	// against maxMathItems; mathCapped says the bound was reached, and
	// logged.
	mathItems, maxMathItems int
	mathCapped              bool
	// pixelsLeft is what remains of the document's image pixel budget.
	pixelsLeft int64
	footnotes  []*stage.Node
	headings   []int // open heading levels, for outline depth
	dropped    map[string]bool
	steps      int
	lines      int // broken so far
	maxLines   int
	items      int // drawn so far
	maxItems   int
	atoms      int // made for the block being laid out
	maxAtoms   int

	// fnRefs counts the references to each footnote (by index) laid out
	// so far, and refAnchors names each one's place, where the note's
	// back links lead.
	fnRefs     map[string]int
	refAnchors map[*stage.Node]string

	// blockOpen are the raw HTML block elements open, across HTML blocks;
	// end tags close those from blockBase up (see blockScope).
	blockOpen []blockOpen
	blockBase int
}

func newEngine(ctx context.Context, opt Options) *engine {
	th := newTheme(opt.Tokens, opt.Page)
	log := opt.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w, h := opt.Page.WidthPt, opt.Page.HeightPt
	content := Box{X0: th.margins[3], Y0: th.margins[0], X1: w - th.margins[1], Y1: h - th.margins[2]}
	return &engine{
		ctx: ctx, th: th, fonts: opt.Fonts, emoji: opt.Emoji, log: log, max: opt.MaxPages, maxLines: cmp.Or(opt.maxLines, MaxLines),
		maxItems: cmp.Or(opt.maxItems, MaxItems), maxAtoms: cmp.Or(opt.maxAtoms, MaxBlockAtoms),
		maxMathItems: cmp.Or(opt.maxMathItems, MaxMathItems),
		doc: &Doc{
			Width: w, Height: h, Content: content,
			Anchors:  map[string]Dest{},
			Body:     fonts.Of(th.body, fonts.Regular),
			BodySize: th.size, Muted: th.muted, TextColor: th.text,
		},
		x0: content.X0, x1: content.X1, top: content.Y0, bottom: content.Y1,
		color: th.text, scale: 1,
		images: map[string]imageRef{}, pixelsLeft: maxDocumentPixels,
		highlight: highlight.NewBudget(),
	}
}

// tick bounds the work between context checks.
func (e *engine) tick() {
	e.steps++
	if e.steps%64 == 0 {
		if err := e.ctx.Err(); err != nil {
			panic(abort{err})
		}
	}
}

func (e *engine) newPage() {
	if e.max > 0 && len(e.doc.Pages) >= e.max {
		panic(abort{ErrTooManyPages})
	}
	if err := e.ctx.Err(); err != nil {
		panic(abort{err})
	}
	e.page = &Page{}
	e.doc.Pages = append(e.doc.Pages, e.page)
	e.pageNo = len(e.doc.Pages) - 1
	e.y = e.top
	e.gap = 0
}

// add appends an item to the page. The budget is counted here, as items
// are made, so a document over it fails before it has cost the memory.
func (e *engine) add(it Item) {
	if e.items++; e.items > e.maxItems {
		panic(abort{ErrTooManyItems})
	}
	e.page.Items = append(e.page.Items, it)
}

// atom counts a text run made for the block being laid out, against
// MaxBlockAtoms.
func (e *engine) atom() {
	if e.atoms++; e.atoms > e.maxAtoms {
		panic(abort{ErrTooManyAtoms})
	}
}

// under puts it on page p before the item at index at, so that it is
// drawn under what was placed from there on: a quote's ground is known
// only once its content is laid out.
func (e *engine) under(p *Page, at int, it Item) {
	if e.items++; e.items > e.maxItems {
		panic(abort{ErrTooManyItems})
	}
	p.Items = slices.Insert(p.Items, at, it)
}

// addGap asks for at least g points before the next block. Gaps collapse
// (the larger wins) and vanish at the top of a page.
func (e *engine) addGap(g float64) { e.gap = math.Max(e.gap, g) }

// atTop reports whether nothing has been placed on the page yet.
func (e *engine) atTop() bool { return e.y <= e.top+eps }

// place makes room for h points at the current position, on a new page if
// they do not fit on this one, and returns the top of that room.
func (e *engine) place(h float64) float64 {
	if !e.atTop() {
		if e.y+e.gap+h > e.bottom+eps {
			e.newPage()
		} else {
			e.y += e.gap
		}
	}
	e.gap = 0
	top := e.y
	e.y += h
	e.cover(top, e.y)
	return top
}

// fits reports whether h more points (plus the owed gap) fit on the page.
func (e *engine) fits(h float64) bool {
	return e.atTop() || e.y+e.gap+h <= e.bottom+eps
}

// The fewest lines of a paragraph, and of a code block, left at the foot
// of a page (orphans) or carried to the top of the next (widows), as the
// themes' CSS asks of Chromium: p { orphans: 2; widows: 2 } in basic (3
// in modern, but a heading keeps with two lines of what follows it, see
// leadHeight), and pre { orphans: 4; widows: 4 } in both.
const (
	paraOrphans, paraWidows = 2, 2
	codeOrphans, codeWidows = 4, 4
)

// linesOnPage returns how many of lines, the rest of a block whose part
// on a page takes extra points besides its lines, go on this page: all
// that fit, fewer so that at least widows go on the next, and none (the
// block starts on the next page) when that leaves fewer than orphans
// here. At the top of a page, where moving on gains nothing, it is at
// least one.
func (e *engine) linesOnPage(lines []line, extra float64, orphans, widows int) int {
	room := e.bottom - e.y - extra
	if !e.atTop() {
		room -= e.gap
	}
	fit, h := 0, 0.0
	for fit < len(lines) && h+lines[fit].h <= room+eps {
		h += lines[fit].h
		fit++
	}
	if fit == len(lines) {
		return fit
	}
	if k := min(fit, len(lines)-widows); k >= orphans {
		return k
	}
	if e.atTop() {
		return max(fit, 1)
	}
	return 0
}

// tracker records, page by page, the vertical extent of what is placed
// while it is active; block quotes draw their bars and grounds from it.
type tracker struct{ segs []segment }

type segment struct {
	page   int
	y0, y1 float64
	at     int // index of the page's first item placed in the segment
}

func (e *engine) track() *tracker {
	t := &tracker{}
	e.trackers = append(e.trackers, t)
	return t
}

func (e *engine) untrack() { e.trackers = e.trackers[:len(e.trackers)-1] }

func (e *engine) cover(y0, y1 float64) {
	for _, t := range e.trackers {
		if n := len(t.segs); n > 0 && t.segs[n-1].page == e.pageNo {
			s := &t.segs[n-1]
			s.y0, s.y1 = math.Min(s.y0, y0), math.Max(s.y1, y1)
			continue
		}
		t.segs = append(t.segs, segment{page: e.pageNo, y0: y0, y1: y1, at: len(e.page.Items)})
	}
}

// anchor records a link target; the first definition of a name wins.
func (e *engine) anchor(name string, y float64) {
	if name == "" {
		return
	}
	if _, ok := e.doc.Anchors[name]; !ok {
		e.doc.Anchors[name] = Dest{Page: e.pageNo, Y: y}
	}
}

// link adds a link area. Fragment links point at anchors (resolved by the
// painter); other links only when their scheme is one a reader can follow.
func (e *engine) link(href string, x, y, w, h float64) {
	if w <= 0 || h <= 0 {
		return
	}
	if name, ok := fragment(href); ok {
		e.add(Item{Kind: LinkAnchor, X: x, Y: y, W: w, H: h, Text: name})
		return
	}
	if followable(href) {
		e.add(Item{Kind: LinkURI, X: x, Y: y, W: w, H: h, Text: href})
	}
}

// text adds a text item and records its characters for font embedding.
func (e *engine) text(x, y float64, s string, face fonts.ID, st *style) {
	used := e.used(face)
	for _, r := range s {
		used.Add(r)
	}
	e.add(Item{Kind: Text, Synth: e.synthetic(face, st), X: x, Y: y, Text: s, Face: face, Size: st.size, Color: st.color})
}

// used is the set of characters drawn with face.
func (e *engine) used(face fonts.ID) *fonts.Runes {
	used := e.doc.Used[face]
	if used == nil {
		used = &fonts.Runes{}
		e.doc.Used[face] = used
	}
	return used
}

// synthetic says which of st's styles face lacks. Only the fallback fonts
// lack one: a DejaVu run is drawn in the face of its style, and italic
// Arabic, which the oblique faces lack, keeps the upright face it has
// always been drawn in. A fallback file that is itself bold or italic
// (its head table says so) is not made so twice.
func (e *engine) synthetic(face fonts.ID, st *style) Synthetic {
	if face < fonts.Count {
		return 0
	}
	f := e.fonts.Face(face)
	var syn Synthetic
	if st.bold && !f.Bold {
		syn |= SynthBold
	}
	if st.italic && !f.Italic {
		syn |= SynthOblique
	}
	return syn
}

// baseStyle is body text in the current container.
func (e *engine) baseStyle() *style {
	return &style{family: e.th.body, italic: e.italic, size: e.th.size * e.scale, color: e.color}
}

// lineHeight is the height of a line of body text in the current container.
func (e *engine) lineHeight() float64 { return e.th.size * e.scale * e.th.lineHeight }

// indent narrows the text column by d for a nested container, unless that
// would leave too little room; it returns what was applied.
func (e *engine) indent(d float64) float64 {
	full := e.doc.Content.X1 - e.doc.Content.X0
	if e.x1-(e.x0+d) < full*minColumn {
		d = math.Max(0, e.x1-full*minColumn-e.x0)
	}
	e.x0 += d
	return d
}

// bookmark adds an outline entry, nesting it under the open headings of
// lower level so that a document starting at h2, or jumping from h1 to h3,
// still gets a well-formed outline.
func (e *engine) bookmark(level int, text string, y float64) {
	for len(e.headings) > 0 && e.headings[len(e.headings)-1] >= level {
		e.headings = e.headings[:len(e.headings)-1]
	}
	e.doc.Outline = append(e.doc.Outline, Mark{Level: len(e.headings), Text: text, Dest: Dest{Page: e.pageNo, Y: y}})
	e.headings = append(e.headings, level)
}
