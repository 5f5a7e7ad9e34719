package markdown

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
)

// headingIDs is goldmark's own set of element ids shared by the parts of
// one document, so that the second heading "x" is "x-1" whichever part
// holds it. A piece of source parsed and then refused (see
// partStream.parse) must not keep the ids it took: rollback forgets them
// by replaying the kept calls into a fresh set, since goldmark's set
// cannot be copied or shrunk.
type headingIDs struct {
	set           parser.IDs
	kept, pending []idCall
}

type idCall struct {
	value []byte
	kind  ast.NodeKind
	put   bool
}

var _ parser.IDs = (*headingIDs)(nil)

func newHeadingIDs() *headingIDs { return &headingIDs{set: newSlugs()} }

func (h *headingIDs) Generate(value []byte, kind ast.NodeKind) []byte {
	h.pending = append(h.pending, idCall{value: bytes.Clone(value), kind: kind})
	return h.set.Generate(value, kind)
}

func (h *headingIDs) Put(value []byte) {
	h.pending = append(h.pending, idCall{value: bytes.Clone(value), put: true})
	h.set.Put(value)
}

// commit keeps the ids taken since the last commit or rollback.
func (h *headingIDs) commit() {
	h.kept = append(h.kept, h.pending...)
	h.pending = h.pending[:0]
}

// rollback forgets the ids taken since the last commit.
func (h *headingIDs) rollback() {
	h.pending = h.pending[:0]
	h.set = newSlugs()
	for _, c := range h.kept {
		if c.put {
			h.set.Put(c.value)
		} else {
			h.set.Generate(c.value, c.kind)
		}
	}
}

// slugs makes a heading's id as GitHub does, so that the links a README
// writes to its own sections (#café, #my_func, #כותרת) find them: the text
// lowercased, every character but letters, marks, digits, "_", "-" and
// spaces dropped, each space a "-", and "-1", "-2"... after a taken one.
// goldmark's own ids keep ASCII letters and digits only and make "_" a
// "-": every heading in Hebrew, Greek or Chinese was "heading", "heading-1"
// and so on, and "Café" was "caf".
type slugs struct {
	taken map[string]bool
	next  map[string]int // the suffix to try next after a taken id: a document of 100,000 equal headings is linear
}

var _ parser.IDs = (*slugs)(nil)

func newSlugs() *slugs { return &slugs{taken: map[string]bool{}, next: map[string]int{}} }

func (s *slugs) Generate(value []byte, kind ast.NodeKind) []byte {
	id := slug(bytes.TrimSpace(value))
	if id == "" {
		id = "heading"
		if kind != ast.KindHeading {
			id = "id"
		}
	}
	if !s.taken[id] {
		s.taken[id] = true
		return []byte(id)
	}
	for i := max(s.next[id], 1); ; i++ {
		if next := id + "-" + strconv.Itoa(i); !s.taken[next] {
			s.taken[next] = true
			s.next[id] = i + 1
			return []byte(next)
		}
	}
}

func (s *slugs) Put(value []byte) { s.taken[string(value)] = true }

func slug(text []byte) string {
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range strings.ToLower(string(text)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.No, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
