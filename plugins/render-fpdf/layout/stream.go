package layout

import (
	"context"
	"errors"
	"fmt"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Stream lays out a document whose top-level blocks arrive in parts, as a
// parse streams them: each part is laid out as it comes, and the result is
// the Doc that Layout gives for the parts' blocks joined into one tree.
//
// A Stream is not safe for concurrent use. Once a call fails, every later
// call returns the same error: the engine stopped halfway through a block,
// so nothing more can be laid out after it.
type Stream struct {
	e *engine
	// pending are the blocks last given to Add that could not be laid out
	// yet (see engine.blocksBefore). A copy: holding the caller's slice
	// would keep every block of its part alive until the next Add.
	pending []*stage.Node
	err     error
}

// errEnded is what a Stream answers after End.
var errEnded = errors.New("layout: stream already ended")

// Begin starts a layout whose blocks are given by Add and that End
// finishes. ctx bounds the whole layout, not just this call.
func Begin(ctx context.Context, opt Options) (*Stream, error) {
	if opt.Fonts == nil {
		return nil, errors.New("layout: no fonts")
	}
	if !(opt.Page.WidthPt > 0 && opt.Page.HeightPt > 0) {
		return nil, fmt.Errorf("layout: invalid page size %vx%v", opt.Page.WidthPt, opt.Page.HeightPt)
	}
	s := &Stream{e: newEngine(ctx, opt)}
	if err := s.run(func() { s.e.newPage() }); err != nil {
		return nil, err
	}
	return s, nil
}

// Add lays out the next top-level blocks of the document. The last of them
// (or a trailing run of inline nodes) waits for the next Add or End, since
// how it is laid out may depend on what follows it. Add keeps no reference
// to blocks itself, and none to the nodes it has laid out but footnote
// lists, which End lays out.
func (s *Stream) Add(blocks []*stage.Node) error {
	return s.run(func() {
		if err := s.e.ctx.Err(); err != nil {
			panic(abort{err})
		}
		s.e.lexAhead(blocks)
		ns := blocks
		if len(s.pending) > 0 {
			ns = append(s.pending, blocks...)
		}
		done := s.e.blocksBefore(ns, false)
		s.pending = nil
		if done < len(ns) {
			s.pending = append([]*stage.Node(nil), ns[done:]...)
		}
	})
}

// End lays out what is pending and the footnotes, and returns the Doc.
func (s *Stream) End() (*Doc, error) {
	var doc *Doc
	err := s.run(func() {
		s.e.blocks(s.pending)
		s.pending = nil
		if len(s.e.footnotes) > 0 {
			s.e.footnoteSection()
		}
		doc = s.e.doc
	})
	if err != nil {
		return nil, err
	}
	s.fail(errEnded)
	return doc, nil
}

// run calls fn, turning the engine's abort into the Stream's error. Any
// other panic is the caller's to recover, but leaves the Stream failed too.
func (s *Stream) run(fn func()) (err error) {
	if s.err != nil {
		return s.err
	}
	defer func() {
		if r := recover(); r != nil {
			a, ok := r.(abort)
			if !ok {
				s.fail(fmt.Errorf("layout: panic: %v", r))
				panic(r)
			}
			s.fail(a.err)
			err = a.err
		}
	}()
	fn()
	return nil
}

// fail ends the Stream with err and lets go of the engine and its pages.
func (s *Stream) fail(err error) {
	s.err, s.e, s.pending = err, nil, nil
}
