package layout

import (
	"github.com/mdpress/mdpress/plugins/internal/highlight"
	"github.com/mdpress/mdpress/sdk/stage"
)

// lexed is a code block's highlighting, done on a goroutine of its own
// ahead of the layout: lexing costs about as much per KiB as laying out a
// page, and on a second core it is done by the time the layout reaches
// the block.
type lexed struct {
	done  chan struct{}
	spans []highlight.Span
}

// lexAhead starts lexing the code blocks among blocks, in document order,
// after those of the blocks given before. One goroutine at a time uses the
// document's budget: each waits for the one before it. The budget bounds
// their time, so a layout that stops early leaves nothing running long.
func (e *engine) lexAhead(blocks []*stage.Node) {
	if e.th.palette == nil {
		return
	}
	var batch []*stage.Node
	// Depth first in document order, without recursion: a stack of the
	// nodes still to visit, the next one last.
	var stack []*stage.Node
	push := func(ns []*stage.Node) {
		for i := len(ns) - 1; i >= 0; i-- {
			stack = append(stack, ns[i])
		}
	}
	push(blocks)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == nil {
			continue
		}
		switch n.Kind {
		case stage.KindCodeBlock:
			if n.Attr("lang") != "" && e.ahead[n] == nil {
				batch = append(batch, n)
			}
		case stage.KindParagraph, stage.KindHeading, stage.KindTable, stage.KindHTMLBlock, stage.KindThematicBreak:
			// Inline content only: most of a document's nodes, no code
			// block among them.
		default:
			push(n.Children)
		}
	}
	if len(batch) == 0 {
		return
	}
	if e.ahead == nil {
		e.ahead = map[*stage.Node]*lexed{}
	}
	items := make([]*lexed, len(batch))
	for i, n := range batch {
		items[i] = &lexed{done: make(chan struct{})}
		e.ahead[n] = items[i]
	}
	prev, done := e.lexDone, make(chan struct{})
	e.lexDone = done
	ctx, budget := e.ctx, e.highlight
	go func() {
		defer close(done)
		if prev != nil {
			<-prev
		}
		for i, n := range batch {
			if ctx.Err() == nil {
				items[i].spans = budget.Spans(n.Attr("lang"), n.Text)
			}
			close(items[i].done)
		}
	}()
}

// codeSpans returns the highlighting of a code block that lexAhead
// started, waiting for it if need be; nil for plain text.
func (e *engine) codeSpans(n *stage.Node) []highlight.Span {
	l := e.ahead[n]
	if l == nil {
		return nil
	}
	delete(e.ahead, n)
	<-l.done
	return l.spans
}
