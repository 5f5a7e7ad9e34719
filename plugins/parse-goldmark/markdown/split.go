package markdown

import (
	"bytes"
)

// splitter finds the lines where a part may start: those before which a
// whole-document parse holds no block open but the document, so that
// parsing the source before and after apart gives the same blocks.
//
// Such a line follows a blank line and starts in column 0 with a
// character that is neither whitespace nor a list marker. goldmark then
// closes every block quote (a blank line already has), list item and
// footnote definition (their content is indented), paragraph and table
// (a blank line ends them), indented code block, and raw HTML block of
// types 6 and 7 (a blank line ends them). A list marker would continue an
// open list. What remains open is a fenced code block or a raw HTML block
// of types 1 to 5, which run to their end marker: the splitter follows
// those that open at the top level and cuts nowhere inside, and what it
// misses the parse of the part shows (see openAtEnd).
//
// Lines end at "\n" alone, as for goldmark; a "\r" is whitespace to both.
type splitter struct {
	src       []byte
	pos       int // start of the next line to read
	prevBlank bool
	open      rawBlock // the fenced or raw HTML block open at the top level
}

// next returns the start of the first line at or after min where a part
// may start, or len(src). Calls must ask for increasing positions.
func (s *splitter) next(min int) int {
	for s.pos < len(s.src) {
		start := s.pos
		end := bytes.IndexByte(s.src[start:], '\n')
		if end < 0 {
			end = len(s.src)
		} else {
			end += start
		}
		s.pos = end + 1
		line := s.src[start:end]
		if s.open.kind != 0 {
			if s.open.closedBy(line) {
				s.open = rawBlock{}
			}
			s.prevBlank = false
			continue
		}
		blank := isBlank(line)
		cut := s.prevBlank && !blank && start >= min && startsAtZero(line)
		s.prevBlank = blank
		if !blank {
			s.open = opening(line)
		}
		if cut {
			return start
		}
	}
	return len(s.src)
}

// startsAtZero reports whether a line closes what a blank line left open
// besides fenced and raw HTML blocks: it starts in column 0 with neither
// whitespace (a control byte counts as such) nor a list marker.
func startsAtZero(line []byte) bool {
	if len(line) == 0 || line[0] <= ' ' || line[0] == 0x7f {
		return false
	}
	switch c := line[0]; {
	case c == '-' || c == '+' || c == '*':
		return len(line) > 1 && line[1] > ' '
	case c >= '0' && c <= '9':
		// Any "1." or "1)" may start an item; a few paragraphs that begin
		// with one are not worth telling apart.
		d := 0
		for d < len(line) && line[d] >= '0' && line[d] <= '9' {
			d++
		}
		return d == len(line) || line[d] != '.' && line[d] != ')'
	}
	return true
}

// rawBlock is a block that only its end marker closes: a fenced code
// block or a raw HTML block of types 1 to 5.
type rawBlock struct {
	kind byte   // 0 for none, 'f' for a fence, '1' to '5' for raw HTML
	char byte   // of a fence
	n    int    // the fence's length
	end  string // raw HTML's end marker, lower case
}

// opening returns the block a line outside one opens, as goldmark's
// fenced code and raw HTML parsers tell it, at the top level.
func opening(line []byte) rawBlock {
	if b := fenceOpening(line); b.kind != 0 {
		return b
	}
	return htmlOpening(line)
}

// fenceOpening: up to three columns of indentation, three or more "`" or
// "~", and no "`" after a backtick fence.
func fenceOpening(line []byte) rawBlock {
	w, i := indentOf(line)
	if w >= 4 || i >= len(line) || line[i] != '`' && line[i] != '~' {
		return rawBlock{}
	}
	c, j := line[i], i
	for j < len(line) && line[j] == c {
		j++
	}
	if j-i < 3 || c == '`' && bytes.IndexByte(line[j:], '`') >= 0 {
		return rawBlock{}
	}
	return rawBlock{kind: 'f', char: c, n: j - i}
}

// htmlStarts are the starts of raw HTML blocks of types 1 to 5 after "<",
// and their end markers; goldmark matches type 1's tag names in any case.
var htmlStarts = []struct {
	kind       byte
	start, end string
}{
	{'1', "script", "</script>"}, {'1', "pre", "</pre>"}, {'1', "style", "</style>"}, {'1', "textarea", "</textarea>"},
	{'2', "!--", "-->"}, {'3', "?", "?>"}, {'5', "![CDATA[", "]]>"},
}

// htmlOpening: up to three spaces, then "<" and a start of htmlStarts, or
// "<!" and a capital letter (type 4). goldmark closes a block whose first
// line holds its end marker at the next line, so that line opens nothing.
func htmlOpening(line []byte) rawBlock {
	i := 0
	for i < 3 && i < len(line) && line[i] == ' ' {
		i++
	}
	if i >= len(line) || line[i] != '<' {
		return rawBlock{}
	}
	rest := line[i+1:]
	b := rawBlock{}
	for _, h := range htmlStarts {
		if hasPrefixFold(rest, h.start) && (h.kind != '1' || tagEnds(rest[len(h.start):])) {
			b = rawBlock{kind: h.kind, end: h.end}
			break
		}
	}
	if b.kind == 0 && len(rest) > 1 && rest[0] == '!' && rest[1] >= 'A' && rest[1] <= 'Z' {
		b = rawBlock{kind: '4', end: ">"}
	}
	if b.kind != 0 && b.closedBy(line) {
		return rawBlock{}
	}
	return b
}

// tagEnds reports whether a type 1 tag name ends where rest starts.
func tagEnds(rest []byte) bool {
	return len(rest) == 0 || rest[0] == '>' || rest[0] <= ' ' || bytes.HasPrefix(rest, []byte("/>"))
}

// closedBy reports whether line ends the block.
func (b rawBlock) closedBy(line []byte) bool {
	switch b.kind {
	case 'f':
		w, i := indentOf(line)
		if w >= 4 {
			return false
		}
		j := i
		for j < len(line) && line[j] == b.char {
			j++
		}
		return j-i >= b.n && isBlank(line[j:])
	case '1':
		return bytes.Contains(bytes.ToLower(line), []byte(b.end))
	}
	return bytes.Contains(line, []byte(b.end))
}

// indentOf returns the columns of spaces and tabs a line starts with, and
// where they end.
func indentOf(line []byte) (w, i int) {
	for ; i < len(line); i++ {
		switch line[i] {
		case ' ':
			w++
		case '\t':
			w += 4 - w%4
		default:
			return w, i
		}
	}
	return w, i
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && bytes.EqualFold(b[:len(prefix)], []byte(prefix))
}

// defPlan says how link reference and footnote definitions let the source
// be cut.
type defPlan struct {
	// whole: parse as one part, for footnotes (numbered across the
	// document, and listed at its end) or a line that looks much like a
	// link reference definition.
	whole bool
	// holdTo is where the last "]:" that may close a definition's label
	// is, or -1 (see partStream.holdTo).
	holdTo int
}

// planDefinitions finds every "]:" that may end the label of a link
// reference or footnote definition. Every definition holds one, and
// "]:" is common in code (JavaScript's computed keys) where it defines
// nothing, so each is judged by the label before it: a definition's
// opens with a "[" that only container markers and whitespace precede on
// its line, and holds no other unescaped bracket or blank line.
func planDefinitions(src []byte) defPlan {
	plan := defPlan{holdTo: -1}
	for off := 0; ; {
		i := bytes.Index(src[off:], []byte("]:"))
		if i < 0 {
			return plan
		}
		p := off + i
		off = p + 2
		if escaped(src, p) {
			continue
		}
		q := labelOpen(src, p)
		switch {
		case q < 0:
		case src[q+1] == '^' || looksDefined(src, q, p):
			return defPlan{whole: true, holdTo: -1}
		default:
			plan.holdTo = p
		}
	}
}

// labelOpen returns where the "[" is that opens a definition's label
// ending at the "]" at p, or -1 when none can: scanning back, another
// unescaped "]", a blank line, or anything but markers before the "[".
func labelOpen(src []byte, p int) int {
	lineHasText := true // the line of p
	for q := p - 1; q >= 0; q-- {
		switch c := src[q]; {
		case c == '\n':
			if !lineHasText {
				return -1
			}
			lineHasText = false
		case (c == '[' || c == ']') && !escaped(src, q):
			if c == ']' || !onlyMarkersBefore(src, q) {
				return -1
			}
			return q
		case c != ' ' && c != '\t' && c != '\r':
			lineHasText = true
		}
	}
	return -1
}

// escaped reports whether an odd run of backslashes precedes src[i] on
// its line, as goldmark pairs them.
func escaped(src []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && src[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// onlyMarkersBefore reports whether only whitespace, control bytes and
// the characters of block quote and list markers precede src[i] on its
// line: where a paragraph, and so a definition, may start.
func onlyMarkersBefore(src []byte, i int) bool {
	for j := i - 1; j >= 0 && src[j] != '\n'; j-- {
		switch c := src[j]; {
		case c <= ' ', c == '>', c == '-', c == '+', c == '*', c == '.', c == ')', c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return true
}

// looksDefined reports whether the label from q to p is on one line and
// opens it after at most three spaces: a definition, unless it sits in a
// fence. Parsing in parts would be held to its end only to start again.
func looksDefined(src []byte, q, p int) bool {
	ls := bytes.LastIndexByte(src[:q], '\n') + 1
	return q-ls <= 3 && len(bytes.TrimLeft(src[ls:q], " ")) == 0 && bytes.IndexByte(src[q:p], '\n') < 0
}
