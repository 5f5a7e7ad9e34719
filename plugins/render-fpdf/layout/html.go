package layout

import (
	"html"
	"math"
	"strings"
)

// Raw HTML is not rendered as a browser would; a documented subset is
// interpreted and everything else is dropped, its text kept:
//
//	b strong            bold
//	i em cite var dfn   italic
//	u ins               underline
//	s del strike        strikethrough
//	sub sup small       smaller, lowered or raised
//	code kbd tt samp    monospace, shaded
//	span font           color from style="color: ..." or color="..."
//	a                   href makes a link; name or id an anchor
//	br                  line break
//	img                 data: URI images, otherwise the alt text
//	q                   its text in quotation marks
//	p div h1-h6 li ...  block boundaries (h1-h6 also bold and sized)
//	ul ol li            indented lists, each item with its bullet or number
//	                    (in HTML blocks)
//	hr                  thematic break (in HTML blocks)
//	pre                 a code block, its lines and spaces kept (in HTML blocks)
//	table               a table, when it ends in its HTML block (htmltable.go)
//	script style ...    dropped with their content
//
// Comments, doctypes and processing instructions are dropped silently;
// other tags are dropped and logged at debug level, once per document.

type tokKind uint8

const (
	tokText tokKind = iota
	tokStart
	tokEnd
)

type token struct {
	kind        tokKind
	name        string // lower case
	text        string // unescaped, for text tokens
	attrs       []attr
	selfClosing bool
}

type attr struct{ key, val string }

func (t *token) attr(key string) string {
	for _, a := range t.attrs {
		if a.key == key {
			return a.val
		}
	}
	return ""
}

// has reports whether the tag carries the attribute, with or without a
// value: <ol reversed>.
func (t *token) has(key string) bool {
	for _, a := range t.attrs {
		if a.key == key {
			return true
		}
	}
	return false
}

// tokenize splits HTML into text and tags. It is forgiving the way HTML
// is: a '<' that does not start a tag is text.
func tokenize(s string, fn func(*token)) {
	for len(s) > 0 {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			fn(&token{kind: tokText, text: html.UnescapeString(s)})
			return
		}
		if i > 0 {
			fn(&token{kind: tokText, text: html.UnescapeString(s[:i])})
			s = s[i:]
		}
		switch {
		case strings.HasPrefix(s, "<!--"):
			end := strings.Index(s[4:], "-->")
			if end < 0 {
				return
			}
			s = s[4+end+3:]
		case len(s) > 1 && (s[1] == '!' || s[1] == '?'):
			end := strings.IndexByte(s, '>')
			if end < 0 {
				return
			}
			s = s[end+1:]
		case len(s) > 2 && s[1] == '/' && isLetter(s[2]):
			end := strings.IndexByte(s, '>')
			if end < 0 {
				end = len(s) - 1
			}
			name, _ := tagName(s[2:end])
			fn(&token{kind: tokEnd, name: name})
			s = s[end+1:]
		case len(s) > 1 && isLetter(s[1]):
			t, rest := startTag(s[1:])
			fn(t)
			s = rest
		default:
			fn(&token{kind: tokText, text: "<"})
			s = s[1:]
		}
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func tagName(s string) (string, string) {
	i := 0
	for i < len(s) && (isLetter(s[i]) || s[i] >= '0' && s[i] <= '9' || s[i] == '-' || s[i] == ':') {
		i++
	}
	return strings.ToLower(s[:i]), s[i:]
}

// startTag parses a start tag after its '<'; it returns the rest of the
// input after the tag's '>'.
func startTag(s string) (*token, string) {
	name, s := tagName(s)
	t := &token{kind: tokStart, name: name}
	for {
		s = strings.TrimLeft(s, " \t\r\n\f")
		switch {
		case s == "":
			return t, ""
		case s[0] == '>':
			return t, s[1:]
		case strings.HasPrefix(s, "/>"):
			t.selfClosing = true
			return t, s[2:]
		case s[0] == '/':
			s = s[1:]
			continue
		}
		i := 0
		for i < len(s) && !strings.ContainsRune(" \t\r\n\f=>/", rune(s[i])) {
			i++
		}
		if i == 0 { // a stray character; skip it
			s = s[1:]
			continue
		}
		a := attr{key: strings.ToLower(s[:i])}
		s = strings.TrimLeft(s[i:], " \t\r\n\f")
		if strings.HasPrefix(s, "=") {
			s = strings.TrimLeft(s[1:], " \t\r\n\f")
			if s != "" && (s[0] == '"' || s[0] == '\'') {
				q := s[0]
				end := strings.IndexByte(s[1:], q)
				if end < 0 {
					a.val, s = s[1:], ""
				} else {
					a.val, s = s[1:1+end], s[2+end:]
				}
			} else {
				j := 0
				for j < len(s) && !strings.ContainsRune(" \t\r\n\f>", rune(s[j])) {
					j++
				}
				a.val, s = s[:j], s[j:]
			}
			a.val = html.UnescapeString(a.val)
		}
		if len(t.attrs) < 32 {
			t.attrs = append(t.attrs, a)
		}
	}
}

// htmlText returns the text content of an HTML fragment.
func htmlText(s string) string {
	var b strings.Builder
	skip := ""
	tokenize(s, func(t *token) {
		switch {
		case skip != "":
			if t.kind == tokEnd && t.name == skip {
				skip = ""
			}
		case t.kind == tokText:
			b.WriteString(t.text)
		case t.kind == tokStart && hidden[t.name] && !t.selfClosing:
			skip = t.name
		case t.kind == tokStart && (blockTags[t.name] || t.name == "br" || t.name == "td" || t.name == "th"):
			b.WriteByte(' ')
		case t.kind == tokStart && t.name == "img":
			b.WriteString(t.attr("alt"))
		}
	})
	return b.String()
}

// hidden elements are dropped with their content.
var hidden = map[string]bool{"script": true, "style": true, "template": true, "noscript": true, "title": true, "textarea": true, "iframe": true, "object": true, "svg": true, "math": true, "head": true}

// void elements have no end tag.
var void = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

// blockTags end the current paragraph in an HTML block.
var blockTags = map[string]bool{
	"p": true, "div": true, "section": true, "article": true, "header": true, "footer": true, "nav": true,
	"aside": true, "main": true, "figure": true, "figcaption": true, "blockquote": true, "ul": true, "ol": true,
	"li": true, "dl": true, "dt": true, "dd": true, "table": true, "thead": true, "tbody": true, "tfoot": true,
	"tr": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "pre": true,
	"details": true, "summary": true, "center": true, "address": true, "hr": true, "body": true, "html": true,
}

// marginFree are the block elements the themes' CSS gives no margin: an
// <li>'s spacing from the item before it comes as it opens (htmlItem).
var marginFree = map[string]bool{"div": true, "center": true, "li": true}

// htmlState is the raw HTML elements open across a run of inline nodes.
type htmlState struct {
	open []openTag
	skip string // name of the hidden element being skipped
}

type openTag struct {
	name   string
	effect func(*style)
}

// apply returns st changed by the open elements.
func (h *htmlState) apply(e *engine, st *style) *style {
	if len(h.open) == 0 {
		return st
	}
	c := *st
	for _, t := range h.open {
		if t.effect != nil {
			t.effect(&c)
		}
	}
	return &c
}

// rawHTML interprets an inline HTML fragment (usually a single tag).
func (in *inliner) rawHTML(src string, st *style) {
	tokenize(src, func(t *token) { in.token(t, st) })
}

// token interprets one token of inline HTML.
func (in *inliner) token(t *token, st *style) {
	switch t.kind {
	case tokText:
		in.text(t.text, st)
	case tokStart:
		in.startTag(t, st)
	case tokEnd:
		in.endTag(t.name, st)
	}
}

func (in *inliner) startTag(t *token, st *style) {
	if in.html.skip != "" {
		return
	}
	e := in.e
	var effect func(*style)
	switch name := t.name; name {
	case "br":
		in.atoms = append(in.atoms, atom{kind: aBreak, st: st})
		return
	case "img":
		// The themes honour height only without a width attribute, valid
		// or not (img[height]:not([width])).
		height := ""
		if !t.has("width") {
			height = t.attr("height")
		}
		in.image(t.attr("src"), t.attr("alt"), t.attr("width"), height, st)
		return
	case "a":
		cur := in.html.apply(e, st)
		for _, key := range []string{"id", "name"} {
			if v := t.attr(key); v != "" {
				in.atoms = append(in.atoms, atom{kind: aAnchor, text: v, st: cur})
			}
		}
		if href := t.attr("href"); href != "" {
			effect = func(s *style) { *s = *e.linkStyle(s, href) }
		}
	case "b", "strong":
		effect = func(s *style) { s.bold = true }
	case "i", "em", "cite", "var", "dfn":
		effect = func(s *style) { s.italic = true }
	case "u", "ins":
		effect = func(s *style) { s.underline = true }
	case "s", "del", "strike":
		effect = e.strikeStyle
	case "sub":
		effect = func(s *style) { s.rise -= s.size * 0.2; s.size *= 0.75 }
	case "sup":
		effect = func(s *style) { s.rise += s.size * 0.35; s.size *= 0.7 }
	case "small":
		effect = func(s *style) { s.size *= 0.85 }
	case "code", "kbd", "tt", "samp":
		effect = func(s *style) { *s = *e.codeStyle(s) }
	case "span", "font":
		c, ok := cssColor(t.attr("style"))
		if !ok {
			c, ok = parseColor(t.attr("color"))
		}
		if ok {
			effect = func(s *style) { s.color = c }
		}
	case "q":
		// A browser quotes a <q>'s text, the words a reader sees;
		// one inside another takes single quotes.
		in.text(quoteMarks[in.quoteDepth()%2][0], st)
	case "h1", "h2", "h3", "h4", "h5", "h6":
		level := int(name[1] - '0')
		effect = func(s *style) { e.headingStyle(s, level) }
	default:
		if hidden[name] {
			if !t.selfClosing {
				in.html.skip = name
			}
			return
		}
		if !blockTags[name] && name != "td" && name != "th" {
			e.droppedTag(name)
		}
	}
	if t.selfClosing || void[t.name] {
		return
	}
	if len(in.html.open) < maxInlineDepth {
		in.html.open = append(in.html.open, openTag{name: t.name, effect: effect})
	}
}

func (in *inliner) endTag(name string, st *style) {
	if in.html.skip != "" {
		if name == in.html.skip {
			in.html.skip = ""
		}
		return
	}
	for i := len(in.html.open) - 1; i >= 0; i-- {
		if in.html.open[i].name == name {
			// Elements closed with it (a <q> left open inside) close
			// their quotes first, innermost first, as a browser's do.
			for j := len(in.html.open) - 1; j >= i; j-- {
				if in.html.open[j].name == "q" {
					in.html.open = in.html.open[:j]
					in.text(quoteMarks[in.quoteDepth()%2][1], st)
				}
			}
			in.html.open = in.html.open[:i]
			return
		}
	}
}

// quoteMarks are the marks a <q> is quoted with, by depth: the default of
// Chromium's style sheet for English.
var quoteMarks = [2][2]string{{"\u201c", "\u201d"}, {"\u2018", "\u2019"}}

// quoteDepth is the number of <q> elements open.
func (in *inliner) quoteDepth() int {
	n := 0
	for _, t := range in.html.open {
		if t.name == "q" {
			n++
		}
	}
	return n
}

// cssColor finds the color property in an inline style attribute.
func cssColor(decl string) (RGB, bool) {
	for part := range strings.SplitSeq(decl, ";") {
		k, v, ok := strings.Cut(part, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "color") {
			return parseColor(strings.TrimSuffix(strings.TrimSpace(v), "!important"))
		}
	}
	return RGB{}, false
}

func (e *engine) droppedTag(name string) {
	if e.dropped == nil {
		e.dropped = map[string]bool{}
	}
	if !e.dropped[name] && len(e.dropped) < 64 {
		e.dropped[name] = true
		e.log.Debug("raw html tag dropped", "tag", name)
	}
}

// htmlBlock lays out a block of raw HTML: its text in paragraphs split at
// block elements, styled by the supported inline elements. The block
// elements it leaves open stay open on the engine (see blockOpen): a
// README opens <div align="center"> in one HTML block and closes it in a
// later one, with Markdown between.
func (e *engine) htmlBlock(src string) {
	st := e.baseStyle()
	in := &inliner{e: e}
	flush := func() {
		if visible(in.atoms) {
			e.flow(in.atoms, st, e.align())
			// Text outside any block element of its container (a lone
			// <br />, an <img>) is an anonymous block in a browser, and
			// a <div> or <center> has no margin in the themes: nothing
			// under them but the next block's own margin.
			if n := len(e.blockOpen); n > e.blockBase && !marginFree[e.blockOpen[n-1].name] {
				e.addGap(e.htmlGap(n - 1))
			}
		} else {
			for _, a := range in.atoms {
				if a.kind == aAnchor {
					e.anchor(a.text, e.y)
				}
			}
		}
		in.atoms = in.atoms[:0]
	}
	// A <pre> is laid out as a code block: its text collapsed into a
	// paragraph would lose the line breaks and indentation that are its
	// content (a diagram, a command's output). Tags inside it are dropped.
	var pre strings.Builder
	preDepth := 0
	// A reversed <ol> numbers its first item with its number of items,
	// which only a look ahead finds; most HTML blocks have none to count.
	var olItems []int
	ols := 0
	if containsFold(src, "reversed") {
		olItems = countItems(src)
	}
	// A <table> is collected and laid out as a table once it ends (see
	// htmltable.go) when none of the block's is left open.
	var tbl *htmlTable
	tables := containsFold(src, "<table") && tablesClosed(src)
	tokenize(src, func(t *token) {
		e.tick()
		if tbl != nil {
			if tbl.add(t) {
				return
			}
			for _, t := range tbl.stray {
				in.token(t, st)
			}
			flush()
			e.table(tbl.node())
			tbl = nil
			return
		}
		if tables && t.kind == tokStart && t.name == "table" && !t.selfClosing && in.html.skip == "" && preDepth == 0 {
			flush()
			tbl = &htmlTable{depth: 1}
			return
		}
		if preDepth > 0 {
			switch {
			case t.kind == tokText:
				pre.WriteString(t.text)
			case t.kind == tokStart && t.name == "br":
				pre.WriteByte('\n')
			case t.kind == tokStart && t.name == "pre" && !t.selfClosing:
				preDepth++
			case t.kind == tokEnd && t.name == "pre":
				if preDepth--; preDepth == 0 {
					e.preBlock(pre.String())
					pre.Reset()
				}
			}
			return
		}
		if t.kind == tokStart && t.name == "pre" && !t.selfClosing && in.html.skip == "" {
			flush()
			preDepth = 1
			return
		}
		switch t.kind {
		case tokText:
			in.text(t.text, st)
		case tokStart:
			if in.html.skip == "" && blockTags[t.name] {
				flush()
				if t.name == "hr" {
					e.rule()
					return
				}
				if !void[t.name] && !t.selfClosing {
					items := 0
					if t.name == "ol" {
						if ols < len(olItems) {
							items = olItems[ols]
						}
						ols++
					}
					e.openBlock(t, items)
				}
			}
			if in.html.skip == "" && (t.name == "td" || t.name == "th") {
				in.text(" ", st)
			}
			in.startTag(t, st)
		case tokEnd:
			skipping := in.html.skip != ""
			in.endTag(t.name, st)
			if !skipping && blockTags[t.name] {
				flush()
				e.closeBlock(t.name)
			}
		}
	})
	if preDepth > 0 { // a <pre> left open runs to the end of the block, as in a browser
		e.preBlock(pre.String())
	}
	flush()
}

// countItems is the number of <li> each <ol> of src holds as its own
// items (not those of a list nested in one), in the order the <ol>s open.
// A list's items past the end of src, in a later HTML block, are not
// counted.
func countItems(src string) []int {
	var counts []int
	var open []int // per open list: its index in counts, or -1 for a <ul>
	tokenize(src, func(t *token) {
		switch {
		case t.kind == tokStart && t.selfClosing:
		case t.kind == tokStart && t.name == "ol":
			open = append(open, len(counts))
			counts = append(counts, 0)
		case t.kind == tokStart && t.name == "ul":
			open = append(open, -1)
		case t.kind == tokStart && t.name == "li":
			if n := len(open); n > 0 && open[n-1] >= 0 {
				counts[open[n-1]]++
			}
		case t.kind == tokEnd && (t.name == "ol" || t.name == "ul"):
			for i := len(open) - 1; i >= 0; i-- {
				if (open[i] >= 0) == (t.name == "ol") {
					open = open[:i]
					break
				}
			}
		}
	})
	return counts
}

// containsFold reports whether s holds word in any case.
func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

// blockOpen is a block element of raw HTML not yet closed, and the
// alignment of what is laid out inside it.
type blockOpen struct {
	name string
	al   align
	// dir is the direction it gives what has none of its own (tables),
	// bL or bR: its dir attribute's, else the one around it.
	dir bidiClass
	// indent is how far a <ul> or <ol> moved the column's left edge in,
	// given back when it closes; next is the number of an <ol>'s next
	// item, step what the next one after adds (-1 when reversed), and
	// typ its type attribute, the counter style numbers are printed in;
	// items counts a list's items opened so far.
	indent float64
	next   int
	step   int
	typ    string
	items  int
}

// align is the alignment the open HTML block elements give the text and
// block images laid out now.
func (e *engine) align() align {
	if n := len(e.blockOpen); n > 0 {
		return e.blockOpen[n-1].al
	}
	return alignStart
}

// htmlDir is the direction a block without one of its own (a table, or
// a raw HTML element without dir) takes from what it is in, as an element
// inherits its parent's in a browser: the innermost raw HTML element open
// in the current list item or quote, else that list's or quote's, else
// the innermost element open around it, else left to right.
func (e *engine) htmlDir() bidiClass {
	n := len(e.blockOpen)
	switch {
	case n > e.blockBase, n > 0 && !e.inherit:
		return e.blockOpen[n-1].dir
	case e.inherit && e.rtl:
		return bR
	}
	return bL
}

// openBlock opens a block element: align="center|right|left" and <center>
// set its alignment, else it inherits the one around it. Past maxDepth
// open elements a new one is not counted (it inherits), which bounds what
// a document of start tags alone holds.
func (e *engine) openBlock(t *token, reversedItems int) {
	e.closeP()
	al := e.align()
	switch strings.ToLower(strings.TrimSpace(t.attr("align"))) {
	case "center":
		al = alignCenter
	case "right":
		al = alignRight
	case "left":
		al = alignLeft
	}
	if t.name == "center" {
		al = alignCenter
	}
	if t.name == "li" {
		e.htmlItem(t)
	}
	dir := e.htmlDir()
	switch strings.ToLower(strings.TrimSpace(t.attr("dir"))) {
	case "rtl":
		dir = bR
	case "ltr":
		dir = bL
	}
	if len(e.blockOpen) < maxDepth {
		b := blockOpen{name: t.name, al: al, dir: dir}
		if t.name == "ul" || t.name == "ol" {
			if e.inHTMLItem(len(e.blockOpen)) {
				e.addGap(e.th.itemGap) // li > ul
			}
			st := e.baseStyle()
			b.indent = e.indent(st.size * 1.5)
			b.next, b.step, b.typ = 1, 1, strings.TrimSpace(t.attr("type"))
			if t.name == "ol" && t.has("reversed") {
				// Without a start, a reversed list counts down to 1 from
				// its number of items.
				b.step, b.next = -1, reversedItems
			}
			if n, ok := listNumber(t.attr("start")); ok {
				b.next = n
			}
		}
		e.blockOpen = append(e.blockOpen, b)
	}
}

// htmlItem gives an <li> of raw HTML its bullet or number, as a browser
// does: GitHub READMEs write lists in HTML inside <details>, tables and
// centred headers, and an <ol>'s items printed without their numbers.
// An item outside any list gets a bullet, as in a browser.
func (e *engine) htmlItem(t *token) {
	st := e.baseStyle()
	m := marker{st: st, right: e.x0 - st.size*0.45}
	// An item that placed nothing keeps its marker on a line of its own;
	// the marker of an outer item waits for this item's first line, where
	// a browser draws both.
	if n := len(e.markers); n > 0 && math.Abs(e.markers[n-1].right-m.right) < eps {
		e.flushMarkers()
	}
	depth := e.listDepth
	var list *blockOpen
	for i := len(e.blockOpen) - 1; i >= e.blockBase; i-- {
		if n := e.blockOpen[i].name; n == "ul" || n == "ol" {
			if list == nil {
				list = &e.blockOpen[i]
			}
			depth++
		}
	}
	if list != nil {
		if list.items > 0 {
			e.addGap(e.th.itemGap) // li + li
		}
		list.items++
	}
	if list != nil && list.name == "ol" {
		if n, ok := listNumber(t.attr("value")); ok {
			list.next = n
		}
		m.text = counter(list.next, list.typ) + "."
		list.next += list.step
	} else {
		m.text = bullets[max(depth-1, 0)%len(bullets)]
	}
	e.markers = append(e.markers, m)
}

// popBlocks closes the open block elements from i up, giving back the
// indentation of the lists among them.
func (e *engine) popBlocks(i int) {
	for j := len(e.blockOpen) - 1; j >= i; j-- {
		e.x0 -= e.blockOpen[j].indent
	}
	e.blockOpen = e.blockOpen[:i]
}

// closeP closes an open <p> before a block element starts, as a browser
// does: <p align="center"> then a blank line and a Markdown paragraph
// (its own <p>) leaves that paragraph aligned left in Chromium.
func (e *engine) closeP() {
	if n := len(e.blockOpen); n > e.blockBase && e.blockOpen[n-1].name == "p" {
		e.blockOpen = e.blockOpen[:n-1]
	}
}

// closeBlock closes the innermost open element of that name in the
// current container and those opened inside it, as a browser's end tag
// does; an end tag with nothing of its name open is ignored. A list ends
// with its margin under it, none in a list item (li > ul).
func (e *engine) closeBlock(name string) {
	for i := len(e.blockOpen) - 1; i >= e.blockBase; i-- {
		if e.blockOpen[i].name == name {
			if (name == "ul" || name == "ol") && !e.inHTMLItem(i) {
				e.addGap(e.th.gap)
			}
			e.popBlocks(i)
			return
		}
	}
}

// inHTMLItem reports whether the open element at i is directly in a list
// item: a raw <li>, or the Markdown item an HTML block is directly in.
func (e *engine) inHTMLItem(i int) bool {
	if i > e.blockBase {
		return e.blockOpen[i-1].name == "li"
	}
	return e.inItem()
}

// htmlGap is the margin under the text of the open element at i: half a
// gap for a <p> directly in a list item (li > p), a paragraph's else.
func (e *engine) htmlGap(i int) float64 {
	if e.blockOpen[i].name == "p" && e.inHTMLItem(i) {
		return e.th.gap / 2
	}
	return e.paraGap()
}

// blockScope confines the HTML block elements opened inside a container
// (a quote, a list item, a footnote) to it: they end with it, as a
// browser ends them at the container's end tag, and end tags inside it do
// not close those opened around it, whose alignment still applies. It
// returns the function that ends the scope.
func (e *engine) blockScope() func() {
	base, n := e.blockBase, len(e.blockOpen)
	e.blockBase = n
	return func() { e.popBlocks(n); e.blockBase = base }
}

// preBlock lays out the text of a <pre> element as a code block. Like a
// browser, it drops the one line break that directly follows <pre>.
func (e *engine) preBlock(text string) {
	text = strings.TrimPrefix(strings.TrimPrefix(text, "\r"), "\n")
	if strings.TrimSpace(text) == "" {
		return
	}
	e.codeBlock(text, nil)
}
