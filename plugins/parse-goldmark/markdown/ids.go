package markdown

import (
	"bytes"

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

func newHeadingIDs() *headingIDs { return &headingIDs{set: parser.NewContext().IDs()} }

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
	h.set = parser.NewContext().IDs()
	for _, c := range h.kept {
		if c.put {
			h.set.Put(c.value)
		} else {
			h.set.Generate(c.value, c.kind)
		}
	}
}
