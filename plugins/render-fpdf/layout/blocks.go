package layout

import (
	"iter"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mdpress/mdpress/plugins/internal/highlight"
	"github.com/mdpress/mdpress/sdk/stage"
)

func isInline(k stage.Kind) bool {
	switch k {
	case stage.KindText, stage.KindSoftBreak, stage.KindHardBreak, stage.KindEmphasis, stage.KindStrong,
		stage.KindStrikethrough, stage.KindCodeSpan, stage.KindLink, stage.KindImage, stage.KindRawHTML,
		stage.KindFootnoteRef:
		return true
	}
	return false
}

// blocks lays out a sequence of block nodes. Inline nodes found among them
// (a tight list item's text, say) form an implicit paragraph.
func (e *engine) blocks(ns []*stage.Node) { e.blocksBefore(ns, true) }

// blocksBefore lays out ns as blocks does and returns how many of its nodes
// it laid out. Unless ns ends the sequence (last), it stops before what may
// lay out differently once more nodes follow: the last block, which gets
// the block after it (a heading keeps with it), a heading whose run of
// headings and rules after it reaches the end of ns (it keeps with what
// ends the run), and a trailing run of inline nodes, which the next ones
// may continue.
func (e *engine) blocksBefore(ns []*stage.Node, last bool) int {
	for i := 0; i < len(ns); i++ {
		if ns[i] == nil {
			continue
		}
		if isInline(ns[i].Kind) {
			j := i
			for j < len(ns) && ns[j] != nil && isInline(ns[j].Kind) {
				j++
			}
			if j == len(ns) && !last {
				return i
			}
			e.paragraph(ns[i:j])
			i = j - 1
			continue
		}
		if !last && readsPast(ns, i) {
			return i
		}
		e.block(ns[i], ns[i+1:])
	}
	return len(ns)
}

// keepRun bounds the headings and rules in a row that a heading looks
// through (leadHeight) to what follows them.
const keepRun = 8

// readsPast reports whether laying out ns[i] looks at blocks after the end
// of ns: the last block does, and so does a heading whose run of headings
// and rules (fewer than keepRun) reaches the end.
func readsPast(ns []*stage.Node, i int) bool {
	if i == len(ns)-1 {
		return true
	}
	if ns[i].Kind != stage.KindHeading {
		return false
	}
	rest := ns[i+1:]
	for j := range keepRun {
		if j == len(rest) {
			return true
		}
		if !keptThrough(rest[j]) {
			return false
		}
	}
	return false
}

// keptThrough reports whether a heading before n keeps with what comes
// after n too: n is a heading, a rule or nothing, and no reader wants it
// alone at the foot of a page under the heading.
func keptThrough(n *stage.Node) bool {
	return n == nil || n.Kind == stage.KindHeading || n.Kind == stage.KindThematicBreak
}

// block lays out n; rest are the blocks after it in its sequence.
func (e *engine) block(n *stage.Node, rest []*stage.Node) {
	e.tick()
	// The runs of the blocks before are garbage by now: only a block's own
	// are held while it is laid out.
	e.atoms = 0
	if e.depth >= maxDepth {
		// Too deep to be a real document: keep the words, drop the structure.
		e.flow(e.shape(e.textAtoms(nil, plainText(n), e.baseStyle())), e.baseStyle(), alignLeft)
		e.addGap(e.paraGap())
		return
	}
	e.depth++
	defer func() { e.depth-- }()
	if n.Kind != stage.KindHTMLBlock && n.Kind != stage.KindFootnotes {
		e.closeP() // every Markdown block is an HTML block element
	}
	switch n.Kind {
	case stage.KindParagraph:
		e.paragraph(n.Children)
	case stage.KindHeading:
		e.heading(n, rest)
	case stage.KindBlockquote:
		defer e.blockScope()()
		e.blockquote(n)
	case stage.KindList:
		e.list(n)
	case stage.KindCodeBlock:
		if !e.displayMath(n) {
			e.codeBlock(n.Text, e.codeSpans(n))
		}
	case stage.KindHTMLBlock:
		e.htmlBlock(n.Text)
	case stage.KindThematicBreak:
		e.rule()
	case stage.KindTable:
		e.table(n)
	case stage.KindFootnotes:
		e.footnotes = append(e.footnotes, n) // notes go at the end of the document
	default:
		// Footnotes outside their list, stray list items, kinds this backend
		// does not know: their content still counts.
		defer e.blockScope()()
		e.blocks(n.Children)
	}
}

// paraGap is the margin under a paragraph: half a gap directly in a list
// item (li > p in the themes), and none in a tight list's, whose text is
// no <p> at all but the item's own, with nothing under it but the next
// item's spacing.
func (e *engine) paraGap() float64 {
	switch {
	case !e.inItem():
		return e.th.gap
	case e.tight:
		return 0
	}
	return e.th.gap / 2
}

// inItem reports whether the block being laid out is directly in a list
// item: the text of a tight item, laid out without a block of its own, is
// one level up.
func (e *engine) inItem() bool { return e.itemDepth > 0 && e.depth <= e.itemDepth }

func (e *engine) paragraph(ns []*stage.Node) {
	defer e.restoreDirection(e.rtl, e.inherit)
	e.ownDirection(ns)
	st := e.baseStyle()
	atoms := e.inlines(ns, st)
	if !visible(atoms) {
		for _, a := range atoms {
			if a.kind == aAnchor {
				e.anchor(a.text, e.y)
			}
		}
		return
	}
	e.flow(atoms, st, e.align())
	e.addGap(e.paraGap())
}

// visible reports whether atoms draw anything.
func visible(atoms []atom) bool {
	for _, a := range atoms {
		switch a.kind {
		case aText, aImage, aBlockImage, aBreak, aEmoji, aMath, aBlockMath:
			return true
		}
	}
	return false
}

// flow lays out inline content in the current column, one line at a time,
// with images too large to sit in a line placed as blocks between lines.
func (e *engine) flow(atoms []atom, strut *style, al align) {
	start := 0
	for i := 0; i <= len(atoms); i++ {
		if i < len(atoms) && atoms[i].kind != aBlockImage && atoms[i].kind != aBlockMath {
			continue
		}
		if seg := atoms[start:i]; visible(seg) {
			lines := e.breakLines(seg, e.x1-e.x0, strut)
			for j := 0; j < len(lines); {
				k := e.linesOnPage(lines[j:], 0, paraOrphans, paraWidows)
				for _, l := range lines[j : j+k] {
					top := e.place(l.h)
					e.emitLine(&l, e.x0, top, e.x1-e.x0, al)
				}
				if j += k; j < len(lines) {
					e.newPage()
				}
			}
		}
		switch {
		case i == len(atoms):
		case atoms[i].kind == aBlockMath:
			e.blockMath(atoms[i])
		default:
			e.blockImage(atoms[i], al)
		}
		start = i + 1
	}
}

// blockImage places an image on lines of its own, aligned as the text
// around it is: <p align="center"><img ...></p> is how READMEs centre a
// logo.
func (e *engine) blockImage(a atom, al align) {
	top := e.place(a.imgH)
	e.drawMarkers(top + e.fonts.Face(e.doc.Body).Ascent*e.th.size)
	x := e.x0
	switch free := math.Max(e.x1-e.x0-a.w, 0); e.lineAlign(al) {
	case alignCenter:
		x += free / 2
	case alignRight:
		x += free
	}
	e.add(Item{Kind: ImageBox, Image: a.img, X: x, Y: top, W: a.w, H: a.imgH})
	if a.st.link != "" {
		e.link(a.st.link, x, top, a.w, a.imgH)
	}
	e.y += e.th.gap * 0.3
}

// headingLines breaks a heading into lines and returns them with its
// level and height, the rule under it included.
func (e *engine) headingLines(n *stage.Node) ([]line, int, float64) {
	level, _ := strconv.Atoi(n.Attr("level"))
	level = min(max(level, 1), 6)
	st := &style{italic: e.italic}
	e.headingStyle(st, level)
	size := st.size
	// A heading's line-height is its own, for whatever it holds.
	defer func(lh float64) { e.th.lineHeight = lh }(e.th.lineHeight)
	e.th.lineHeight = e.th.headingLineHeight
	lines := e.breakLines(e.inlines(n.Children, st), e.x1-e.x0, st)
	h := 0.0
	for _, l := range lines {
		h += l.h
	}
	if e.headingRule(level) {
		pad, width := headingRuleBox(level, size)
		h += pad + width
	}
	return lines, level, h
}

// headingStyle gives s the heading's face, size and colour for level
// (1..6). A level that is not italic keeps the italics it is inside (an
// italic quote's), as a heading inherits font-style in CSS.
func (e *engine) headingStyle(s *style, level int) {
	i := level - 1
	s.family, s.size = e.th.heading, e.th.headingSizes[i]*e.scale
	s.bold = !e.th.headingRegular[i]
	s.italic = s.italic || e.th.headingItalic[i]
	s.color = e.th.headingColor
	if e.th.headingMuted[i] {
		s.color = e.th.muted
	}
}

func (e *engine) headingRule(level int) bool { return e.th.headingRule && level <= 2 }

// headingRuleBox is the space between a heading of level (1 or 2) and size
// and its rule, and the rule's width: modern's, whose rule this is, an h1
// 0.25em over a 2px border, an h2 0.2em over 1px.
func headingRuleBox(level int, size float64) (pad, width float64) {
	if level == 1 {
		return size * 0.25, 1.5
	}
	return size * 0.2, 0.75
}

// headingGap is the space above a heading: the theme's, or, from a styler
// that sends none, more for a higher level.
func (e *engine) headingGap(level int) float64 {
	if e.th.headingSpaced {
		return e.th.headingSpace[0]
	}
	return e.th.gap * (1.2 + 0.1*float64(6-level))
}

// headingBelow is the space under a heading.
func (e *engine) headingBelow() float64 {
	if e.th.headingSpaced {
		return e.th.headingSpace[1]
	}
	return e.th.gap * 0.7
}

func (e *engine) heading(n *stage.Node, rest []*stage.Node) {
	defer e.restoreDirection(e.rtl, e.inherit)
	e.ownDirection(n.Children)
	lines, level, h := e.headingLines(n)
	size := e.th.headingSizes[level-1] * e.scale
	e.addGap(e.headingGap(level))
	// Keep the heading with the start of what follows it.
	if !e.fits(h + e.belowHeading(rest) + e.leadHeight(rest, 0)) {
		e.newPage()
	}
	for i := range lines {
		top := e.place(lines[i].h)
		if i == 0 {
			e.anchor(n.Attr("id"), top)
			e.bookmark(level, strings.Join(strings.Fields(bookmarkText(n)), " "), top)
		}
		e.emitLine(&lines[i], e.x0, top, e.x1-e.x0, e.align())
	}
	if e.headingRule(level) {
		pad, width := headingRuleBox(level, size)
		y := e.y + pad + width/2
		e.add(Item{Kind: Line, X: e.x0, Y: y, X2: e.x1, Y2: y, LineWidth: width, Color: e.th.accent})
		e.y += pad + width
	}
	e.addGap(e.headingBelow())
}

// belowHeading is what the space under a heading adds to the gap that
// leadHeight counts above the first of ns, the block after the heading: a
// design's headingSpacing may put more under a heading than a paragraph
// gap, and the two margins collapse into the larger.
func (e *engine) belowHeading(ns []*stage.Node) float64 {
	above := e.th.gap
	if len(ns) > 0 && ns[0] != nil && ns[0].Kind == stage.KindHeading {
		level, _ := strconv.Atoi(ns[0].Attr("level"))
		above = e.headingGap(min(max(level, 1), 6))
	}
	return math.Max(0, e.headingBelow()-above)
}

// leadHeight estimates the room the start of ns needs on the page of the
// heading before it: a heading is never left alone at the foot of a page.
// Headings and rules at the start are counted with what follows them,
// since each keeps with that in turn and would otherwise leave the one
// before alone; a list or quote starts as its first block does. A run
// that cannot be kept together (keepRun long, or taller than a page) asks
// only for the start of its next heading, or every heading of a long run
// would take a page of its own.
func (e *engine) leadHeight(ns []*stage.Node, depth int) float64 {
	runOn := e.th.gap + e.th.headingSizes[5]*e.th.lineHeight + 2*e.lineHeight()
	if len(ns) >= keepRun && !slices.ContainsFunc(ns[:keepRun], func(n *stage.Node) bool { return !keptThrough(n) }) {
		return runOn
	}
	// Lines broken and formulas laid out only to be measured are not the
	// document's.
	defer func(n, maths, items int) {
		e.lines, e.maths, e.mathItems = n, e.maths[:maths], items
	}(e.lines, len(e.maths), e.mathItems)
	total := 0.0
	for i, n := range ns {
		if total > e.bottom-e.top {
			return runOn
		}
		if depth >= maxDepth {
			break
		}
		switch {
		case n == nil:
		case n.Kind == stage.KindHeading:
			_, level, h := e.headingLines(n)
			total += e.headingGap(level) + h + e.belowHeading(ns[i+1:])
		case n.Kind == stage.KindThematicBreak:
			total += e.th.gap + math.Max(e.th.gap, 6)
		default:
			return total + e.blockLead(n, depth)
		}
	}
	return total
}

// blockLead is leadHeight for a block that is neither a heading nor a rule.
func (e *engine) blockLead(n *stage.Node, depth int) float64 {
	body := e.lineHeight()
	switch n.Kind {
	case stage.KindParagraph:
		return e.th.gap + e.paraLead(n)
	case stage.KindCodeBlock:
		if a, ok := e.formulaIn(n, e.baseStyle(), e.x1-e.x0); ok {
			// A display formula moves to the next page whole.
			return e.th.gap + e.fitDisplay(a).height()
		}
		lines := float64(keptLines(strings.Count(strings.TrimSuffix(n.Text, "\n"), "\n")+1, codeOrphans, codeWidows))
		return e.th.gap + lines*e.th.codeSize*e.th.codeLineHeight + 2*e.th.codePad[0]
	case stage.KindTable:
		return e.th.gap + 2*(body+2*cellPadY)
	case stage.KindList:
		if len(n.Children) > 0 && n.Children[0] != nil {
			if h := e.leadHeight(n.Children[0].Children, depth+1); h > 0 {
				return h
			}
		}
	case stage.KindBlockquote:
		if title, rest, _ := e.alertParts(n); title != nil {
			// An alert's title keeps with the start of its body
			// (alertTitle), so the heading before it keeps with both.
			return e.th.gap + e.th.alertPad + body + e.bodyLead(rest, e.th.gap*0.4, depth+1)
		}
		if h := e.leadHeight(n.Children, depth+1); h > 0 {
			// The gap leadHeight counts before a first paragraph, which
			// has none under the padding, stands for the one before the
			// quote.
			return e.th.quotePad + h
		}
	case stage.KindHTMLBlock:
		if leadsWithTable(n.Text) {
			return e.th.gap + 2*(body+2*cellPadY) // as a Markdown table's
		}
		// An <img> block starts with the image.
		in := &inliner{e: e}
		in.rawHTML(n.Text, e.baseStyle())
		for _, a := range in.atoms {
			if a.kind == aBlockImage {
				return e.th.gap + a.imgH
			}
			if visible([]atom{a}) {
				break
			}
		}
	}
	return e.th.gap + 2*body
}

// bodyLead is leadHeight for the blocks at the top of a quote, under its
// padding or an alert's title, where the gap before the first of them is
// gap: none under the padding, the title's own under a title, not the
// paragraph gap leadHeight counts before a block. A heading there keeps
// its own, as it adds it wherever it stands.
func (e *engine) bodyLead(ns []*stage.Node, gap float64, depth int) float64 {
	h := e.leadHeight(ns, depth)
	if h > 0 && !leadsWithHeading(ns) {
		h = math.Max(0, h-e.th.gap+gap)
	}
	return h
}

// leadsWithHeading reports whether the first block of ns, or of the first
// item of a list it starts with, is a heading, as leadHeight reaches it.
func leadsWithHeading(ns []*stage.Node) bool {
	for _, n := range ns {
		switch {
		case n == nil:
			continue
		case n.Kind == stage.KindHeading:
			return true
		case n.Kind == stage.KindList && len(n.Children) > 0 && n.Children[0] != nil:
			return leadsWithHeading(n.Children[0].Children)
		}
		return false
	}
	return false
}

// paraLead returns the height a paragraph needs on the page it starts
// on: a block image or display formula it starts with, which moves to the
// next page whole when it does not fit, else its first lines, as many as
// flow keeps at the foot of a page (all of a paragraph too short to break).
func (e *engine) paraLead(n *stage.Node) float64 {
	atoms := e.inlines(n.Children, e.baseStyle())
lead:
	for _, a := range atoms {
		switch a.kind {
		case aBlockImage:
			return a.imgH
		case aBlockMath:
			return e.fitDisplay(a).height()
		case aSpace, aAnchor:
		default:
			break lead
		}
	}
	// Only the first lines count, and lines no wider than the column hold
	// no more than their width of runs: a long paragraph is not broken
	// whole to be measured.
	room := (paraOrphans + paraWidows + 1) * (e.x1 - e.x0)
	for i, a := range atoms {
		if room -= a.w; room < 0 || a.kind == aBlockImage || a.kind == aBlockMath {
			atoms = atoms[:i]
			break
		}
	}
	lines := e.breakLines(atoms, e.x1-e.x0, e.baseStyle())
	h := 0.0
	for _, l := range lines[:keptLines(len(lines), paraOrphans, paraWidows)] {
		h += l.h
	}
	return h
}

// keptLines is how many of a block's n lines have to fit at the foot of a
// page for it to start there: all when it is too short to break between
// orphans and widows.
func keptLines(n, orphans, widows int) int {
	if n < orphans+widows {
		return n
	}
	return orphans
}

// codeBlock lays out preformatted text on a shaded ground, set in by the
// theme's indent behind its rule. Long lines wrap between characters; the
// block breaks across pages between lines, each page's part shaded and
// ruled on its own.
func (e *engine) codeBlock(code string, spans []highlight.Span) {
	// Left to right whatever the container: see the README's Characters.
	defer e.restoreDirection(e.rtl, e.inherit)
	e.rtl = false
	st := &style{family: e.th.mono, italic: e.italic, size: e.th.codeSize * e.scale, color: e.th.codeText}
	d := e.indent(e.th.codeIndent)
	defer func() { e.x0 -= d }()
	pad, rule := e.th.codePad[0], e.th.codeRule
	left := e.x0 + rule + e.th.codePad[1]
	width := max(e.x1-left-e.th.codePad[2], st.size)
	strut := st
	var lines []line
	for src := range e.codeLines(code, spans, st) {
		e.tick()
		for _, l := range e.breakLines(e.preAtoms(src), width, strut) {
			l.h = st.size * e.th.codeLineHeight
			lines = append(lines, l)
		}
	}
	for i := 0; i < len(lines); {
		k := e.linesOnPage(lines[i:], 2*pad, codeOrphans, codeWidows)
		if k == 0 {
			e.newPage()
			continue
		}
		top := e.place(2*pad + lines[i].h)
		e.y = top + pad
		e.drawMarkers(top + pad + lines[i].baseline())
		at := len(e.page.Items)
		e.add(Item{Kind: Fill, X: e.x0, Y: top, W: e.x1 - e.x0, Color: e.th.codeBg})
		if rule > 0 {
			e.add(Item{Kind: Fill, X: e.x0, Y: top, W: rule, Color: e.th.rule})
		}
		for end := i + k; i < end; i++ {
			e.emitLine(&lines[i], left, e.y, width, alignLeft)
			e.y += lines[i].h
		}
		e.y += pad
		e.page.Items[at].H = e.y - top
		if rule > 0 {
			e.page.Items[at+1].H = e.y - top
		}
		e.cover(top, e.y)
		if i < len(lines) {
			e.newPage()
		}
	}
	e.addGap(e.th.gap)
}

// codeLines yields a code block's lines, without their line breaks, as
// runs of text in their highlight colours: one plain run a line when
// spans is nil (no palette, no language chroma knows, the document's
// highlighting budget spent).
func (e *engine) codeLines(code string, spans []highlight.Span, st *style) iter.Seq[[]preRun] {
	return func(yield func([]preRun) bool) {
		if spans == nil {
			spans = []highlight.Span{{Text: code}}
		}
		// As before highlighting: the block's final line break ends its
		// last line rather than starting an empty one.
		if k := len(spans) - 1; strings.HasSuffix(spans[k].Text, "\n") {
			spans[k].Text = strings.TrimSuffix(spans[k].Text, "\n")
		}
		styles := map[string]*style{}
		var runs []preRun
		for _, sp := range spans {
			rst := st
			if c, ok := e.th.palette[sp.Class]; ok && sp.Class != highlight.Plain {
				if rst = styles[sp.Class]; rst == nil {
					rst = st.with(func(s *style) { s.color = c })
					styles[sp.Class] = rst
				}
			}
			for {
				text, rest, more := strings.Cut(sp.Text, "\n")
				if text = strings.TrimSuffix(text, "\r"); text != "" || !more {
					runs = append(runs, preRun{text, rst})
				}
				if !more {
					break
				}
				if !yield(runs) {
					return
				}
				runs = nil
				sp.Text = rest
			}
		}
		yield(runs)
	}
}

func (e *engine) blockquote(n *stage.Node) {
	defer e.restoreDirection(e.rtl, e.inherit)
	title, body, alert := e.alertParts(n)
	// An alert's direction is its body's, not its English title's, as the
	// HTML's title with a dir="auto" of its own leaves it.
	e.container(body)
	bar := math.Max(2, e.th.size*0.25)
	// The theme's indent on both sides, as the CSS's margin-inline.
	in := e.indent(e.th.quoteIndent)
	out := math.Min(e.th.quoteIndent, math.Max(0, e.x1-e.x0-(e.doc.Content.X1-e.doc.Content.X0)*minColumn))
	e.x1 -= out
	defer func() { e.x0, e.x1 = e.x0-in, e.x1+out }()
	x, x0, x1 := e.x0, e.x0, e.x1
	if e.rtl { // the bar is on the side the lines start from
		x = e.x1 - bar
	}
	d := e.indentStart(bar + e.th.size)
	color, italic := e.color, e.italic
	barColor := e.th.quoteBar
	if title != nil {
		// An alert's body is text to be read, not a quote's muted aside.
		barColor = alert
	} else {
		e.color = e.th.muted
		e.italic = e.th.quoteItalic
	}
	// An alert's title stands between its padding and its body, the
	// title's gap under it.
	pad, titleH, under := e.th.quotePad, 0.0, 0.0
	if title != nil {
		pad, titleH, under = e.th.alertPad, e.lineHeight(), e.th.gap*0.4
	}
	// fits counts the gap before the quote.
	if pad > 0 && !e.fits(pad+titleH+e.bodyLead(body, under, e.depth+1)) {
		// The padding goes with the first lines, not alone at the foot
		// of a page.
		e.newPage()
	}
	t := e.track()
	if pad > 0 {
		e.place(pad)
	}
	if title != nil {
		e.alertTitle(title, body, alert)
	}
	e.blocks(body)
	if pad > 0 {
		// The padding, not the last block's margin, is under the last
		// line, as the CSS's blockquote > :last-child drops the margin.
		e.gap = 0
		y := math.Min(e.y+pad, e.bottom)
		e.cover(e.y, y)
		e.y = y
	}
	e.untrack()
	e.color, e.italic = color, italic
	e.outdentStart(d)
	for _, s := range t.segs {
		p := e.doc.Pages[s.page]
		if e.th.quoteFilled {
			e.under(p, s.at, Item{Kind: Fill, X: x0, Y: s.y0, W: x1 - x0, H: s.y1 - s.y0, Color: e.th.quoteFill})
		}
		if d > 0 {
			p.Items = append(p.Items, Item{Kind: Fill, X: x, Y: s.y0, W: bar, H: s.y1 - s.y0, Color: barColor})
		}
	}
	e.addGap(e.th.gap)
}

// alertKinds are the kinds of GitHub's alerts, in the order of
// theme.alerts.
var alertKinds = [...]string{"note", "tip", "important", "warning", "caution"}

// alertParts splits a quote that is one of GitHub's alerts (see
// stage.Node) into its title paragraph, its body and its colour, the
// theme's for its kind. A plain quote, or an alert of a kind this backend
// does not know, has no title: its blocks are all body, and a title
// paragraph among them prints as the quote's first line.
func (e *engine) alertParts(n *stage.Node) (title *stage.Node, body []*stage.Node, c RGB) {
	kind := n.Attr("alert")
	if kind == "" || len(n.Children) == 0 || n.Children[0] == nil || n.Children[0].Attr("alert_title") == "" {
		return nil, n.Children, RGB{}
	}
	for i, k := range alertKinds {
		if k == kind {
			return n.Children[0], n.Children[1:], e.th.alerts[i]
		}
	}
	return nil, n.Children, RGB{}
}

// alertTitle lays out an alert's title in bold in the alert's colour, on
// the side the alert's lines start from, kept with the start of its body.
// It draws no icon: fpdf has no paths to draw an octicon with, and an icon
// glyph would be text that Chromium's SVG icon is not, in a copy or a
// search of the PDF.
func (e *engine) alertTitle(n *stage.Node, body []*stage.Node, c RGB) {
	st := &style{family: e.th.body, bold: true, size: e.th.size * e.scale, color: c}
	lines := e.breakLines(e.inlines(n.Children, st), e.x1-e.x0, st)
	h := 0.0
	for _, l := range lines {
		h += l.h
	}
	gap := e.th.gap * 0.4
	if !e.fits(h + e.bodyLead(body, gap, e.depth)) {
		e.newPage()
	}
	for i := range lines {
		top := e.place(lines[i].h)
		e.emitLine(&lines[i], e.x0, top, e.x1-e.x0, e.lineAlign(alignStart))
	}
	e.addGap(gap)
}

// rule is a thematic break.
func (e *engine) rule() {
	h := math.Max(e.th.gap, 6)
	top := e.place(h)
	e.drawMarkers(top + h/2)
	y := top + h/2
	e.add(Item{Kind: Line, X: e.x0, Y: y, X2: e.x1, Y2: y, LineWidth: 0.8, Color: e.th.rule})
	e.addGap(e.th.gap)
}

// footnoteSection lays out the notes after the rest of the document, under
// a short rule, in smaller muted text.
func (e *engine) footnoteSection() {
	e.addGap(e.th.gap * 2)
	top := e.place(e.th.gap)
	e.add(Item{Kind: Line, X: e.x0, Y: top + e.th.gap/2, X2: e.x0 + (e.x1-e.x0)/3, Y2: top + e.th.gap/2, LineWidth: 0.6, Color: e.th.rule})
	scale, color := e.scale, e.color
	e.scale, e.color = e.th.footnoteScale, e.th.muted
	defer func() { e.scale, e.color = scale, color }()
	// References inside the notes count too, and a note may be laid out
	// before one that refers to it.
	refs := maps.Clone(e.fnRefs)
	if refs == nil {
		refs = map[string]int{}
	}
	for _, list := range e.footnotes {
		countRefs(list, refs, 0)
	}
	// Each note is an item of an ordered list: its paragraphs li > p, the
	// notes li + li apart.
	defer func(tight bool, item int) { e.tight, e.itemDepth = tight, item }(e.tight, e.itemDepth)
	e.tight, e.itemDepth = false, e.depth+1
	n := 0
	for _, list := range e.footnotes {
		for _, fn := range list.Children {
			if n++; n > 1 {
				e.addGap(e.th.itemGap)
			}
			index := fn.Attr("index")
			if index == "" {
				index = strconv.Itoa(n)
			}
			st := e.baseStyle()
			label := index + "."
			indent := math.Max(e.width(label, st.face(), st.size)+st.size*0.6, st.size*1.8)
			d := e.indent(indent)
			e.markers = append(e.markers, marker{text: label, st: st, right: e.x0 - st.size*0.4,
				anchors: []string{footnoteAnchor(index), fn.Attr("id")}})
			end := e.blockScope()
			e.blocks(withBacklinks(fn.Children, index, refs[index]))
			end()
			e.flushMarkers()
			e.x0 -= d
		}
	}
}

// footnoteAnchor names a footnote's position; the NUL keeps it apart from
// any id a document can contain.
func footnoteAnchor(index string) string { return "\x00fn:" + index }

// footnoteRefAnchor names the position of the k-th reference to a
// footnote, where its k-th back link leads.
func footnoteRefAnchor(index, k string) string { return "\x00fnref:" + index + ":" + k }

// kindBacklink is a footnote's back link to one reference (attributes
// index and ref, the reference's number from 0). The parser drops
// goldmark's back links from the tree; this backend adds its own, and the
// NUL keeps the kind apart from any the parser sends.
const kindBacklink stage.Kind = "\x00footnote_backlink"

// withBacklinks returns a note's blocks with its back links appended, as
// goldmark places them: at the end of its last paragraph, else in a
// paragraph of their own after its last block. The tree is not modified.
func withBacklinks(blocks []*stage.Node, index string, refs int) []*stage.Node {
	if refs == 0 {
		return blocks
	}
	links := make([]*stage.Node, refs)
	for k := range links {
		links[k] = &stage.Node{Kind: kindBacklink, Attrs: map[string]string{"index": index, "ref": strconv.Itoa(k)}}
	}
	out := slices.Clone(blocks)
	if n := len(out); n > 0 && out[n-1] != nil && out[n-1].Kind == stage.KindParagraph {
		last := *out[n-1]
		last.Children = append(slices.Clone(last.Children), links...)
		out[n-1] = &last
		return out
	}
	return append(out, &stage.Node{Kind: stage.KindParagraph, Children: links})
}

// countRefs adds the footnote references under n to counts, maxDepth
// levels deep at most.
func countRefs(n *stage.Node, counts map[string]int, depth int) {
	if n == nil || depth > maxDepth {
		return
	}
	if n.Kind == stage.KindFootnoteRef {
		index := n.Attr("index")
		if index == "" {
			index = "*"
		}
		counts[index]++
	}
	for _, c := range n.Children {
		countRefs(c, counts, depth+1)
	}
}

// plainText returns the text of a subtree without recursion, so that depth
// costs nothing here.
// bookmarkText is a heading's text for its bookmark: its plain text, with
// each formula in the plain form the parser gives it (attribute plain),
// which the PDF's title has too, rather than its TeX source.
func bookmarkText(n *stage.Node) string {
	var b strings.Builder
	n.Walk(func(m *stage.Node) bool {
		if p := m.Attr("plain"); p != "" && m.Kind == stage.KindCodeSpan {
			b.WriteString(p)
			return false
		}
		switch m.Kind {
		case stage.KindText, stage.KindCodeSpan:
			b.WriteString(m.Text)
		case stage.KindSoftBreak, stage.KindHardBreak:
			b.WriteByte(' ')
		case stage.KindHTMLBlock, stage.KindRawHTML:
			b.WriteString(htmlText(m.Text))
		}
		return true
	})
	return b.String()
}

func plainText(n *stage.Node) string {
	var b strings.Builder
	stack := []*stage.Node{n}
	for len(stack) > 0 {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if m == nil {
			continue
		}
		switch m.Kind {
		case stage.KindText, stage.KindCodeSpan, stage.KindCodeBlock:
			b.WriteString(m.Text)
		case stage.KindSoftBreak, stage.KindHardBreak:
			b.WriteByte(' ')
		case stage.KindHTMLBlock, stage.KindRawHTML:
			b.WriteString(htmlText(m.Text))
		}
		for i := len(m.Children) - 1; i >= 0; i-- {
			stack = append(stack, m.Children[i])
		}
	}
	return b.String()
}
