package markdown

import (
	"bytes"
	"math"
	"strconv"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Limits of the work a document may ask of goldmark, in the units that
// measure counts. goldmark cannot be interrupted and some of its paths are
// quadratic, so a request that crosses one is refused before parsing
// rather than left to run for minutes or hours. Each is set so that the
// worst input within it parses in well under a second on one core, and is
// far above what real documents reach (the corpus repeated to 10 MiB stays
// under 4% of each).
const (
	// Emphasis delimiters are matched by a backward search over the open
	// ones (no openers_bottom), so one inline block costs up to the square
	// of its delimiter runs: 110,000 runs in a paragraph took 4 s, 55,000
	// (the bound) 1 s.
	maxDelimiterWork = 3_000_000_000
	// An unclosed code span scans the rest of its block once for every
	// distinct backtick run length: runs of growing length took 39 s on
	// 10 MiB.
	maxCodeSpanWork = 200_000_000
	// A link destination after "](" is scanned to the next space on every
	// attempt: 32 KiB of "[a](" took 0.6 s and 10 MiB would take hours.
	maxLinkScanWork = 100_000_000
	// Every footnote reference searches the definitions one by one and the
	// definitions are sorted by insertion: 20,000 of each took 3.6 s.
	maxFootnoteWork = 100_000_000
	// Each link reference definition at the start of a paragraph re-slices
	// the paragraph's remaining lines: 1 MiB of them took 31 s.
	maxRefDefWork = 100_000_000
	// A "]" that closes a link label first walks everything parsed since
	// its "[" for a link inside (links do not nest) and resolves the
	// emphasis there, so each open label costs what follows it: 900 "["
	// around 100,000 emphasised words took 15 s, 470,000 nested brackets
	// 15 s. A walk over many nodes misses the cache at every one (80 ns),
	// so the bound is set on the worst shapes at it: 0.7 s for 2 labels
	// around the most nodes the node budget lets through, 0.35 s for 30,
	// 0.25 s for 900 around emphasis.
	maxLabelWork = 10_000_000
	// The heap a parse may hold at its peak, as cost.heap estimates it:
	// goldmark's tree, ours and the HTML. Every kind alone at the bound
	// peaks under it (TestParseHeapBounded); real documents estimate at
	// one and a half to two times what they hold, the corpus repeated to
	// 10 MiB at 300 to 420 MiB, parsed whole with its HTML in 180 to 220.
	maxParseHeap = 448 << 20
)

// cost is what one linear scan of the source predicts goldmark will spend
// on it. Every figure errs high: a shape that looks like one goldmark may
// treat as something else counts as both.
type cost struct {
	// nodes estimates the AST's size in plain nodes of about 250 bytes,
	// since goldmark's memory follows it: see the weights.
	nodes int64
	// heap estimates the bytes a parse holds at its peak: goldmark's
	// AST, the tree and the HTML made from it (see heapWeight).
	heap      int64
	delims    int64 // sum over inline blocks of their delimiter runs squared
	codeSpans int64 // sum over inline blocks of distinct backtick run lengths times bytes
	linkScans int64 // bytes that link destination scans may cover
	footnotes int64 // definitions times (definitions + references)
	refDefs   int64 // sum over paragraphs of definitions times lines
	labels    int64 // sum over "]" of the nodes since the "[" it closes
}

// Weights of what goldmark builds, in plain nodes (a paragraph line's text,
// a delimiter run), set from peak memory over inputs made of nothing else.
// A line is a text node, and another when a space or punctuation splits
// it; a block after a blank line adds a paragraph; a code span holds its
// text; an autolink (a scheme's ":", an "@", "www.") holds a link and its
// text; a heading carries its generated id (1.3 KB in all); a container
// marker opens a list and an item, or a quote; a link label opener keeps
// its state (420 bytes), an image's more (1.3 KB nested); raw HTML keeps
// its segments (550 bytes); a footnote reference adds a link and a back
// link (1.8 KB); a table cell holds a text node, and goldmark pads every
// row to the header's width. A line also costs each open list level it
// walks (see nesting), 240 bytes a level.
// kind is a piece of what goldmark builds, as measure tells them apart.
type kind int

const (
	kindLine        kind = iota // a line's text
	kindBlock                   // a paragraph after a blank line or a marker
	kindHeading                 // with its generated id
	kindMarker                  // a container marker: a list and an item, or a quote
	kindLevel                   // an open list level a line walks (see nesting)
	kindCell                    // a table cell, padded to the header's width
	kindRow                     // a table row
	kindRun                     // an emphasis delimiter run
	kindCodeSpan                // a backtick run
	kindLabel                   // a link label opener and its state
	kindClose                   // a "]"
	kindFootnote                // a footnote reference: a link and a back link
	kindImage                   // an image opener
	kindRawHTML                 // raw HTML and its segments
	kindAutolink                // an autolink: a link and its text
	kindPunct                   // an escape, entity or pipe that splits text
	kindLink                    // a link or image made at "](": its node and attributes
	kindDestination             // a ":" or "@" in a link destination
	kinds
)

// nodeWeight is what each kind counts in plain nodes: see cost.nodes.
var nodeWeight = [kinds]int64{
	kindLine: 2, kindBlock: 1, kindHeading: 6, kindMarker: 3, kindLevel: 1,
	kindCell: 3, kindRow: 1, kindRun: 1, kindCodeSpan: 2, kindLabel: 2,
	kindClose: 1, kindFootnote: 7, kindImage: 4, kindRawHTML: 3,
	kindAutolink: 2, kindPunct: 1, kindLink: 0, kindDestination: 2,
}

// heapWeight is what each kind costs in bytes of heap: see cost.heap.
var heapWeight = [kinds]int64{
	kindLine: 420, kindBlock: 380, kindHeading: 1700, kindMarker: 650, kindLevel: 160,
	kindCell: 450, kindRow: 400, kindRun: 150, kindCodeSpan: 380, kindLabel: 420,
	kindClose: 100, kindFootnote: 1800, kindImage: 800, kindRawHTML: 650,
	kindAutolink: 1200, kindPunct: 100, kindLink: 700, kindDestination: 0,
}

// heapByte is the heap a byte of source costs: its copies (the request,
// the defused source), its text in the tree and in the HTML.
const heapByte = 4

// add counts n pieces of kind k.
func (c *cost) add(k kind, n int64) {
	c.nodes += n * nodeWeight[k]
	c.heap += n * heapWeight[k]
}

// block is the inline block being scanned: the lines between two blank
// lines or list items, an over-estimate of goldmark's paragraphs.
type block struct {
	lines, bytes, delims, refDefs int64
	ticks                         map[int]struct{}
	scans                         []linkScan // reused by each line
	// openers holds, for each "[" not yet closed, the node count when it
	// opened (see maxOpenLabels). An image's "]" is counted too, though
	// goldmark does not walk it: a "![" that goldmark reads as text (in a
	// code span, a raw HTML attribute) would otherwise let its "]" close
	// a link's "[" for free.
	openers []int64
	// first is the node count at the block's first "[" (-1: none), and
	// hidden whether the block has a backtick or a "<": in a code span or
	// raw HTML a "]" is text to goldmark, and such "]" would take the "["
	// of later ones from measure's stack, so there every "]" is charged
	// from first.
	first  int64
	hidden bool
}

func (c *cost) endBlock(b *block) {
	c.delims += b.delims * b.delims
	c.codeSpans += int64(len(b.ticks)) * b.bytes
	c.refDefs += b.refDefs * b.lines
	clear(b.ticks)
	b.openers = b.openers[:0]
	b.first, b.hidden = -1, false
	b.lines, b.bytes, b.delims, b.refDefs = 0, 0, 0, 0
}

// measure scans src (already defused) line by line.
func measure(src []byte) cost {
	c := cost{nodes: 1} // the document
	b := block{ticks: map[int]struct{}{}, first: -1}
	var nest nesting
	var fnDefs, fnRefs int64
	columns := int64(0) // of the table being scanned, 0 outside one
	prevBlank := true
	for start := 0; start <= len(src); {
		end := start
		for end < len(src) && src[end] != '\n' {
			end++
		}
		line := src[start:end]
		start = end + 1
		if isBlank(line) {
			c.add(kindLevel, nest.blank())
			c.endBlock(&b)
			columns, prevBlank = 0, true
			if end >= len(src) {
				break
			}
			continue
		}
		p := containerPrefix(line)
		if p.item {
			c.endBlock(&b)
		}
		body := line[p.end:]
		c.add(kindLine, 1)
		c.add(kindMarker, int64(p.markers))
		c.add(kindLevel, nest.line(&p, prevBlank))
		c.heap += heapByte * int64(len(line)+1)
		if prevBlank || p.markers > 0 {
			c.add(kindBlock, 1)
		}
		if isHeading(body) {
			c.add(kindHeading, 1)
		}
		fnDefs += int64(p.footnotes)
		switch {
		case columns > 0:
			c.add(kindCell, columns)
			c.add(kindRow, 1)
			// goldmark parses each cell's inlines apart: no label
			// crosses a row.
			b.openers, b.first = b.openers[:0], -1
		case !prevBlank && isDelimiterRow(body):
			columns = int64(cells(body))
			c.add(kindCell, 2*columns) // header and delimiter rows
			c.add(kindRow, 2)
		}
		if isRefDef(body) {
			b.refDefs++
		}
		b.lines++
		b.bytes += int64(len(line)) + 1
		fnRefs += c.inline(body, &b)
		prevBlank = false
		if end >= len(src) {
			break
		}
	}
	c.endBlock(&b)
	c.footnotes = fnDefs * (fnDefs + fnRefs)
	return c
}

// inline counts the bytes of one line's content that may start inline
// nodes, its delimiter and backtick runs, and the reach of its link
// destination scans. It returns the footnote references seen.
func (c *cost) inline(body []byte, b *block) (fnRefs int64) {
	// A destination scan starts after "](" and runs, like goldmark's, to
	// the next space or the first ")" that closes more than it opened,
	// skipping escaped punctuation. scans holds the open ones with the
	// paren depth at their start; the depths never decrease upwards, so a
	// ")" closes those on top.
	scans := b.scans[:0]
	depth := 0
	end := func(at, depth int) {
		for len(scans) > 0 && scans[len(scans)-1].depth > depth {
			c.linkScans += int64(at - scans[len(scans)-1].start)
			scans = scans[:len(scans)-1]
		}
	}
	for i := 0; i < len(body); {
		switch ch := body[i]; ch {
		case '*', '_', '~', '`':
			j := i
			for j < len(body) && body[j] == ch {
				j++
			}
			if ch == '`' {
				b.hidden = true
				c.add(kindCodeSpan, 1)
				b.ticks[j-i] = struct{}{}
			} else {
				c.add(kindRun, 1) // a run is one node until it pairs up
				b.delims++
			}
			i = j
			continue
		case '[':
			if b.first < 0 {
				b.first = c.nodes
			}
			if len(b.openers) < maxOpenLabels {
				b.openers = append(b.openers, c.nodes)
			}
			c.add(kindLabel, 1)
			if i+1 < len(body) && body[i+1] == '^' {
				fnRefs++
				c.add(kindFootnote, 1)
			}
		case ']':
			switch {
			case b.hidden && b.first >= 0:
				c.labels += c.nodes - b.first
			case len(b.openers) > 0:
				// Not the "[" this "]" closes, which goldmark may see
				// otherwise: the block's first still open, whose walk
				// bounds every other's.
				c.labels += c.nodes - b.openers[0]
			}
			if len(b.openers) > 0 {
				b.openers = b.openers[:len(b.openers)-1]
			}
			c.add(kindClose, 1)
			if i+1 < len(body) && body[i+1] == '(' {
				c.add(kindLink, 1)
				if len(scans) == maxOpenScans {
					c.linkScans = max(c.linkScans, maxLinkScanWork+1)
				} else {
					scans = append(scans, linkScan{start: i + 2, depth: depth + 1})
				}
			}
		case '(':
			depth++
		case ')':
			depth--
			end(i, depth)
		case '<':
			c.add(kindRawHTML, 1)
			b.hidden = true
		case ':', '@':
			if len(scans) > 0 {
				// In a link's destination, which its "](" paid for, as
				// it paid for an autolink there if the link fails.
				c.add(kindDestination, 1)
			} else {
				c.add(kindAutolink, 1)
			}
		case 'w':
			if bytes.HasPrefix(body[i:], []byte("www.")) {
				c.add(kindAutolink, 1)
			}
		case '\\':
			c.add(kindPunct, 1)
			if i+1 < len(body) && isPunct(body[i+1]) {
				i += 2
				continue
			}
		case '!':
			if i+1 < len(body) && body[i+1] == '[' {
				c.add(kindImage, 1)
			} else {
				c.add(kindPunct, 1)
			}
		case '&', '|':
			c.add(kindPunct, 1)
		case ' ', '\t', '\r', '\v', '\f':
			end(i, math.MinInt)
		}
		i++
	}
	end(len(body), math.MinInt)
	b.scans = scans
	return fnRefs
}

// maxOpenScans bounds the open destination scans measure keeps. So many
// already cover more than maxLinkScanWork bytes, since they start at least
// two bytes apart (2+4+...+2n), so past it the budget is spent and the
// rest are not kept: 10 MiB of "](" would have kept 80 MB of them.
const maxOpenScans = 1 << 14

// maxOpenLabels bounds the open "[" measure keeps (512 KB of them). A "]"
// past it is counted from an older "[", which errs high, and no document
// opens so many labels in one paragraph.
const maxOpenLabels = 1 << 16

// linkScan is a link destination scan still open.
type linkScan struct{ start, depth int }

// check refuses a document whose cost crosses a limit, naming what to
// simplify. The AST estimate is held to twice the tree's node limit: it
// counts heavy nodes several times and errs high, and real documents
// estimate at three to five times the tree they yield (the corpus at
// 10 MiB: 1.1 to 1.7 million against 300,000 to 460,000 tree nodes). It
// let shapes whose nodes weigh more reach 560 MB, so the heap is held to
// its own bound, in bytes.
func (c cost) check(maxNodes int) error {
	// Every refusal names its limit in details.limit, as the README
	// promises, in the unit the budget counts, so that a client can tell
	// which one its document crossed.
	tooComplex := func(what string, limit int64, unit string) error {
		return &stage.Error{
			Code:    stage.CodeTooLarge,
			Message: "document too complex: " + what,
			Details: map[string]string{"limit": strconv.FormatInt(limit, 10) + " " + unit},
		}
	}
	switch {
	case c.heap > maxParseHeap:
		return tooComplex("it would take more than "+strconv.Itoa(maxParseHeap>>20)+" MiB of memory to parse",
			maxParseHeap>>20, "MiB of parse memory")
	case c.nodes > 2*int64(maxNodes):
		return &stage.Error{
			Code:    stage.CodeTooLarge,
			Message: "document too complex: more than " + strconv.Itoa(maxNodes) + " elements",
			Details: map[string]string{"limit": strconv.Itoa(maxNodes)},
		}
	case c.delims > maxDelimiterWork:
		return tooComplex("too many emphasis markers (*, _, ~) in one paragraph",
			maxDelimiterWork, "emphasis delimiter comparisons")
	case c.codeSpans > maxCodeSpanWork:
		return tooComplex("too many unmatched backtick runs in one paragraph",
			maxCodeSpanWork, "bytes scanned for code spans")
	case c.linkScans > maxLinkScanWork:
		return tooComplex("too many \"](\" without spaces between them",
			maxLinkScanWork, "bytes scanned for link destinations")
	case c.footnotes > maxFootnoteWork:
		return tooComplex("too many footnotes", maxFootnoteWork, "footnote lookups")
	case c.refDefs > maxRefDefWork:
		return tooComplex("too many link reference definitions in one paragraph",
			maxRefDefWork, "link reference definition lines scanned")
	case c.labels > maxLabelWork:
		return tooComplex("too much inside nested or unmatched brackets ([ ])",
			maxLabelWork, "nodes walked to close brackets")
	}
	return nil
}

// prefix is a line's container prefix.
type prefix struct {
	markers   int  // block quote, list and footnote definition markers
	footnotes int  // footnote definition labels among them
	item      bool // a list item with content starts here: a new inline block
	end       int  // index of the content after the prefix

	// For nesting, the list and footnote definition markers: before the
	// first ">", the columns where their content may start (from one past
	// the marker), those past lineIndent only counted; after it, counted.
	lists       columns
	deepLists   int
	quotedLists int
	// The columns of whitespace the line starts with, and those after the
	// first ">" up to the next list marker.
	indent, quoteIndent int
	// A ">" with nothing after the prefix: blank inside the quote.
	quoteBlank bool
}

// containerPrefix reads the markers that open containers at the start of
// a line, by the rules excess uses. A list item starts a new inline block
// only when goldmark must see one: a bullet, less than four columns in,
// followed by content (an ordered item may continue a paragraph).
func containerPrefix(line []byte) prefix {
	var p prefix
	cols := 0 // since the last marker
	col := 0  // of the line, where tab stops fall
	quote, list := false, false
	var breaks breakTails
	i := 0
scan:
	for i < len(line) {
		switch c := line[i]; {
		case c == ' ' || c == '\t':
			w := 1
			if c == '\t' {
				w = 4 - col%4
				cols += 4 - cols%4
			} else {
				cols++
			}
			switch {
			case p.markers == 0:
				p.indent += w
			case quote && !list:
				p.quoteIndent += w
			}
			col += w
			i++
			continue
		case c == '>':
			quote = true
			p.markers++
			col++
			i++
		case c == '-' || c == '+' || c == '*':
			if !followedBySpace(line, i+1) || c != '+' && breaks.from(line, i) {
				break scan
			}
			if cols < 4 && !isBlank(line[i+1:]) {
				p.item = true
			}
			p.markers++
			col++
			p.list(quote, col+1)
			list = true
			i++
		case c == '[':
			end := footnoteLabelEnd(line, i)
			if end < 0 {
				break scan
			}
			p.markers++
			p.footnotes++
			// A definition's content continues four columns past where
			// its parent's starts, and the label starts at most three
			// past that.
			p.list(quote, col+1)
			list = true
			col += end - i
			i = end
		case c >= '0' && c <= '9':
			d := i
			for d < len(line) && d-i < 10 && line[d] >= '0' && line[d] <= '9' {
				d++
			}
			if d-i > 9 || d >= len(line) || (line[d] != '.' && line[d] != ')') || !followedBySpace(line, d+1) {
				break scan
			}
			p.markers++
			col += d + 1 - i
			p.list(quote, col+1)
			list = true
			i = d + 1
		default:
			break scan
		}
		cols = 0
	}
	p.end = i
	p.quoteBlank = quote && isBlank(line[i:])
	return p
}

// list records a list or footnote definition marker, inside a block quote
// or not, whose content starts at column content or later.
func (p *prefix) list(quoted bool, content int) {
	switch {
	case quoted:
		p.quotedLists++
	case content > lineIndent:
		p.deepLists++
	default:
		p.lists.add(content)
	}
}

// isDelimiterRow reports whether line may be a table's delimiter row:
// only pipes, colons, dashes and spaces, at least one dash, and a pipe or
// colon (a line of dashes alone is a heading underline or a break).
func isDelimiterRow(line []byte) bool {
	dash, sep := false, false
	for _, c := range line {
		switch c {
		case '-':
			dash = true
		case '|', ':':
			sep = true
		case ' ', '\t', '\r':
		default:
			return false
		}
	}
	return dash && sep
}

// isHeading reports whether line may be a heading: one to six "#" then a
// space or the end, or a setext underline of "=" or "-".
func isHeading(line []byte) bool {
	line = bytes.TrimRight(line, " \t\r")
	if len(line) == 0 {
		return false
	}
	switch line[0] {
	case '#':
		n := 0
		for n < len(line) && line[n] == '#' {
			n++
		}
		return n <= 6 && (n == len(line) || line[n] == ' ' || line[n] == '\t')
	case '=', '-':
		return len(bytes.Trim(line, string(line[:1]))) == 0
	}
	return false
}

// isRefDef reports whether line may start a link reference definition:
// up to three spaces, "[" (not a footnote's "[^") and "]:" later on.
func isRefDef(line []byte) bool {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i >= len(line)-1 || line[i] != '[' || line[i+1] == '^' {
		return false
	}
	for j := i + 1; j+1 < len(line); j++ {
		if line[j] == ']' && line[j+1] == ':' {
			return true
		}
	}
	return false
}

func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// cells counts the cells of a delimiter row: its pipes, less a leading
// and a trailing one, plus one.
func cells(row []byte) int {
	row = bytes.TrimSpace(row)
	row = bytes.TrimPrefix(row, []byte("|"))
	row = bytes.TrimSuffix(row, []byte("|"))
	return bytes.Count(row, []byte("|")) + 1
}
