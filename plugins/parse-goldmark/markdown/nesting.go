package markdown

import "math/bits"

// nesting bounds, from line to line, the list levels (list items and
// footnote definitions) goldmark holds open. goldmark walks the open
// containers again on every line, blank lines included, so its cost is
// depth times lines, and depth reached by indentation is as dear as depth
// reached by markers: a stair of items each indented one level deeper
// ("- a", "  - a", "    - a", ...) opens one container a line, yet 10 MiB
// of it peaked at 560 MB in 3.5 s; 256 KiB of blank lines after it, 1.4 GB.
//
// goldmark continues a list level only on a line indented to where the
// item's content starts, and a block quote only on a ">". So outside
// quotes a line walks the levels whose content starts within its
// indentation; inside them, whose offsets (two columns or more each) fit
// in its whitespace after the first ">". A blank line walks every level
// outside quotes and closes the quotes. Any other line may be the lazy
// continuation of a paragraph, which closes nothing, unless a blank line
// comes before it: only there may a level be dropped.
type nesting struct {
	lists columns // where the content of open levels outside quotes starts
	// Open levels outside quotes whose content starts past lineIndent. Only
	// a line indented further walks them, and defuse leaves none but
	// thematic breaks so.
	deep   int
	quoted int // open levels inside block quotes, at most
}

// blank returns the levels a blank line walks.
func (n *nesting) blank() int64 {
	n.quoted = 0
	return int64(n.lists.upTo(lineIndent) + n.deep)
}

// line returns the levels a line with prefix p walks, at most, and adds
// those it opens. A ">" followed by nothing is a blank line to the levels
// inside the quote.
func (n *nesting) line(p *prefix, afterBlank bool) int64 {
	quoted := min(n.quoted, p.quoteIndent/2)
	if p.quoteBlank {
		quoted = n.quoted
	}
	walked := n.lists.upTo(p.indent) + quoted
	deep := p.indent > lineIndent
	if deep {
		walked += n.deep
	}
	if afterBlank {
		n.lists.keepUpTo(p.indent)
		if !deep {
			n.deep = 0
		}
	}
	n.lists.union(&p.lists)
	n.deep = max(n.deep, p.deepLists)
	n.quoted = max(n.quoted, quoted+p.quotedLists)
	return int64(walked)
}

// columns is a set of columns from 0 to lineIndent.
type columns [lineIndent/64 + 1]uint64

func (s *columns) add(c int) { s[c/64] |= 1 << (c % 64) }

func (s *columns) union(t *columns) {
	for i := range s {
		s[i] |= t[i]
	}
}

// upTo counts the columns up to c.
func (s *columns) upTo(c int) int {
	n := 0
	for i, w := range s {
		n += bits.OnesCount64(w & upTo(c-64*i))
	}
	return n
}

// keepUpTo drops the columns past c.
func (s *columns) keepUpTo(c int) {
	for i := range s {
		s[i] &= upTo(c - 64*i)
	}
}

// upTo is the mask of bits 0 to c of a word.
func upTo(c int) uint64 {
	switch {
	case c < 0:
		return 0
	case c >= 63:
		return ^uint64(0)
	}
	return 1<<(c+1) - 1
}
