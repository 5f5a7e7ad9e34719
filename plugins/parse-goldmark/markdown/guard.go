package markdown

import "bytes"

// Bounds of one line's container prefix. No real document comes near
// them; they are fixed rather than tied to maxDepth because they protect the
// parser, and the HTML does not depend on the tree's limits.
const (
	lineMarkers = 64
	lineIndent  = 128
)

// nbsp is U+00A0. Markdown does not count it as indentation, yet a <pre>
// shows it as a space, so indented code keeps its look.
var nbsp = []byte("\u00a0")

// defuse bounds the block nesting a single line can open before goldmark
// sees it. goldmark's block parser spends time proportional to the square
// of the nesting on each line (100,000 nested ">" take seconds, 10 MiB of
// them hours), so a line may open at most maxMarkers containers (block
// quotes, list items, footnote definitions) and carry at most maxIndent
// columns of whitespace in its container prefix. Past either bound the
// marker is backslash-escaped, or the whitespace turned into no-break
// spaces, which keeps every character as text. Thematic breaks ("* * *")
// are left alone. src is returned as is when no line needs a change.
func defuse(src []byte, maxMarkers, maxIndent int) []byte {
	var out []byte // nil until a line changes
	done := 0      // src[:done] is already in out
	for start := 0; start < len(src); {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		line := src[start:end]
		if at, kind := excess(line, maxMarkers, maxIndent); kind != fine {
			out = append(out, src[done:start+at]...)
			switch kind {
			case tooDeep:
				if line[at] >= '0' && line[at] <= '9' {
					// "12." becomes "12\.": escape the delimiter.
					d := at
					for line[d] >= '0' && line[d] <= '9' {
						d++
					}
					out = append(out, line[at:d]...)
					at = d
				}
				out = append(out, '\\')
				done = start + at
			case tooWide:
				w := at
				for w < len(line) && (line[w] == ' ' || line[w] == '\t') {
					out = append(out, nbsp...)
					w++
				}
				done = start + w
			}
		}
		start = end + 1
	}
	if out == nil {
		return src
	}
	return append(out, src[done:]...)
}

type excessKind int

const (
	fine    excessKind = iota
	tooDeep            // at: the first marker over the limit
	tooWide            // at: the first whitespace byte over the limit
)

// excess scans the container prefix of one line: whitespace, block quote
// markers, bullets and ordered-list markers.
func excess(line []byte, maxMarkers, maxIndent int) (int, excessKind) {
	if len(line) <= maxMarkers && 4*len(line) <= maxIndent {
		return 0, fine // too short to exceed either bound, tabs included
	}
	if isThematicBreak(line) {
		return 0, fine
	}
	markers, cols := 0, 0
	for i := 0; i < len(line); {
		switch c := line[i]; {
		case c == ' ' || c == '\t':
			if c == '\t' {
				cols += 4 - cols%4
			} else {
				cols++
			}
			if cols > maxIndent {
				return i, tooWide
			}
			i++
		case c == '>':
			if markers++; markers > maxMarkers {
				return i, tooDeep
			}
			i++
		case c == '-' || c == '+' || c == '*':
			if !followedBySpace(line, i+1) {
				return 0, fine
			}
			if markers++; markers > maxMarkers {
				return i, tooDeep
			}
			i++
		case c == '[':
			end := footnoteLabelEnd(line, i)
			if end < 0 {
				return 0, fine
			}
			if markers++; markers > maxMarkers {
				return i, tooDeep
			}
			i = end
		case c >= '0' && c <= '9':
			d := i
			for d < len(line) && d-i < 10 && line[d] >= '0' && line[d] <= '9' {
				d++
			}
			if d-i > 9 || d >= len(line) || (line[d] != '.' && line[d] != ')') || !followedBySpace(line, d+1) {
				return 0, fine
			}
			if markers++; markers > maxMarkers {
				return i, tooDeep
			}
			i = d + 1
		default:
			return 0, fine
		}
	}
	return 0, fine
}

// footnoteLabelEnd returns the index after "[^label]:" starting at i, or
// -1. The label follows goldmark's rules: at most 999 bytes, no unescaped
// "[", not blank.
func footnoteLabelEnd(line []byte, i int) int {
	if i+1 >= len(line) || line[i+1] != '^' {
		return -1
	}
	blank := true
	for j := i + 2; j < len(line) && j-(i+2) < 999; j++ {
		switch c := line[j]; c {
		case '\\':
			if j+1 < len(line) && isPunct(line[j+1]) {
				blank = false
				j++
			}
		case '[':
			return -1
		case ']':
			if blank || j+1 >= len(line) || line[j+1] != ':' {
				return -1
			}
			return j + 2
		case ' ', '\t', '\r':
		default:
			blank = false
		}
	}
	return -1
}

func isPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// followedBySpace reports whether a list marker ending before i is followed
// by whitespace or the end of the line, as CommonMark requires.
func followedBySpace(line []byte, i int) bool {
	return i >= len(line) || line[i] == ' ' || line[i] == '\t' || line[i] == '\r'
}

// isThematicBreak reports whether line is three or more of one of -, *, _
// with only spaces or tabs between.
func isThematicBreak(line []byte) bool {
	var mark byte
	n := 0
	for _, c := range line {
		switch c {
		case ' ', '\t', '\r':
		case '-', '*', '_':
			if mark != 0 && c != mark {
				return false
			}
			mark = c
			n++
		default:
			return false
		}
	}
	return n >= 3
}

// breakTails tells, for the bullets of one line, whether the line from a
// bullet on is a thematic break, reading the line's tail once for each
// mark: isThematicBreak at every bullet read it again per bullet, so
// "- - ... -" then a megabyte of "-" and an "x" cost 64 passes over it.
type breakTails struct {
	known       [2]bool // for "-", "*"
	start, last [2]int  // see breakTail
}

// from reports whether line[i:], which starts with "-" or "*", is a
// thematic break.
func (b *breakTails) from(line []byte, i int) bool {
	k := 0
	if line[i] == '*' {
		k = 1
	}
	if !b.known[k] {
		b.start[k], b.last[k] = breakTail(line, line[i])
		b.known[k] = true
	}
	return b.start[k] <= i && i <= b.last[k]
}

// breakTail returns where the longest tail of line made of mark and
// whitespace starts, and the index of the third mark from the end (-1
// with fewer): line[i:], starting with mark, is a thematic break exactly
// when i lies between them.
func breakTail(line []byte, mark byte) (start, last int) {
	last, n := -1, 0
	start = len(line)
	for ; start > 0; start-- {
		switch line[start-1] {
		case mark:
			if n++; n == 3 {
				last = start - 1
			}
		case ' ', '\t', '\r':
		default:
			return start, last
		}
	}
	return start, last
}
