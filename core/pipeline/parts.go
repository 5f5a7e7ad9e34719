package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// errCutShort ends a stage call because another stage of the same run
// failed; the call is not observed as a failure of its own.
var errCutShort = errors.New("cut short: another stage failed")

// errRenderTimeout ends a render in parts that ran past the render timeout.
var errRenderTimeout = errors.New("render timeout")

// inParts says whether the run streams the parse into the render: the
// renderer lays out the tree as its parts arrive, and both stages speak
// parts.
func inParts(st Stages) (stage.PartParser, stage.PartRenderer, bool) {
	if !slices.Contains(st.RendererCaps, stage.CapReadsTreeParts) {
		return nil, nil, false
	}
	parser, ok := st.Parser.(stage.PartParser)
	if !ok {
		return nil, nil, false
	}
	renderer, ok := st.Renderer.(stage.PartRenderer)
	return parser, renderer, ok
}

// prepareInParts parses, styles and renders a document for a renderer that
// reads the tree in parts. The parse starts at once, beside the key check
// and the credit reservation, as it does for other renderers; the render
// starts once the credits are reserved (reserved is closed) and lays out
// each part as the parser hands it over, so that a long document's parse
// hides behind its layout instead of coming before it.
func (p *Pipeline) prepareInParts(ctx context.Context, st Stages, job Job, parser stage.PartParser, renderer stage.PartRenderer, reserved <-chan struct{}) prepared {
	pr := prepared{treeOnly: true}
	styled := make(chan styleResult, 1)
	go func() {
		s, err := p.style(ctx, st, job, stage.Document{}, true)
		styled <- styleResult{s, err}
	}()
	pctx, cut := context.WithCancelCause(ctx)
	defer cut(nil)
	q := newPartQueue()
	// The render timeout bounds the render, not the parse it waits on: it
	// runs from when the parse has handed over its last part.
	rctx, rcancel := context.WithCancelCause(pctx)
	defer rcancel(nil)
	type parseEnd struct {
		err error
		cut bool // cut short by another stage's failure, before it ended
	}
	parsed := make(chan parseEnd, 1)
	var timeout *time.Timer
	go func() {
		var resp *stage.ParseResponse
		parseCtx, cancel := within(pctx, st.ParseTimeout)
		err := p.call(pctx, stage.NameParse, func() (e error) {
			resp, e = parser.ParseParts(parseCtx, &stage.ParseRequest{Markdown: job.Markdown, SkipHTML: true}, q.push)
			return e
		})
		cancel()
		if err != nil {
			q.fail()
		} else {
			pr.parsed = resp
			if st.RenderTimeout > 0 {
				timeout = time.AfterFunc(st.RenderTimeout, func() { rcancel(errRenderTimeout) })
			}
			q.finish(resp.Document)
		}
		parsed <- parseEnd{err, errors.Is(context.Cause(pctx), errCutShort)}
	}()
	// Every path below waits for the parse's end, after which timeout is
	// set if it ever is.
	defer func() {
		if timeout != nil {
			timeout.Stop()
		}
	}()

	s := <-styled
	if s.err != nil {
		cut(errCutShort)
		<-parsed
		pr.err = s.err
		return pr
	}
	pr.styled = s.styled
	select {
	case <-reserved:
	case <-pctx.Done():
		// Abandoned before its credits were reserved: nothing is rendered.
		<-parsed
		pr.err = context.Cause(pctx)
		return pr
	}
	rreq := &stage.RenderRequest{Tokens: s.styled.Tokens, Page: job.Page, Numbering: job.Numbering,
		Watermark: job.Watermark, Lang: job.Lang}
	renderErr := p.call(pctx, stage.NameRender, func() (e error) {
		pr.rendered, e = renderer.RenderParts(rctx, rreq, q)
		if e == nil {
			e = checkRendered(pr.rendered)
		}
		if e != nil && pctx.Err() == nil && errors.Is(context.Cause(rctx), errRenderTimeout) {
			e = stage.Wrap(stage.CodeTimeout, context.DeadlineExceeded, "render timed out")
		}
		return e
	})
	renderFailed := renderErr != nil && !errors.Is(renderErr, errCutShort)
	if renderFailed {
		cut(errCutShort)
	}
	pe := <-parsed
	switch {
	case pe.err != nil && !pe.cut:
		pr.err = pe.err // the parse's own failure, which also ended the render
	case renderFailed:
		pr.err = renderErr
	case pe.err != nil:
		pr.err = pe.err
	case renderErr != nil:
		pr.err = renderErr
	}
	if pr.err != nil {
		pr.rendered = nil
	}
	return pr
}

// partQueue hands the parser's parts to the renderer as they come. The
// parser never waits for the renderer: parts are small next to the time
// laying them out takes, and the parse is bounded by its own budget.
type partQueue struct {
	mu     sync.Mutex
	parts  []stage.Part
	rest   stage.Document
	done   bool // rest is set
	failed bool
	ready  chan struct{} // one consumer: a pending signal is enough
}

func newPartQueue() *partQueue { return &partQueue{ready: make(chan struct{}, 1)} }

func (q *partQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *partQueue) push(p stage.Part) error {
	q.mu.Lock()
	q.parts = append(q.parts, p)
	q.mu.Unlock()
	q.signal()
	return nil
}

func (q *partQueue) finish(rest stage.Document) {
	q.mu.Lock()
	q.rest, q.done = rest, true
	q.mu.Unlock()
	q.signal()
}

// fail ends the parts for good: the parse failed, and its error is the
// run's; the renderer is told only that it was cut short.
func (q *partQueue) fail() {
	q.mu.Lock()
	q.failed = true
	q.mu.Unlock()
	q.signal()
}

func (q *partQueue) Next(ctx context.Context) (stage.Part, error) {
	for {
		q.mu.Lock()
		switch {
		case q.failed:
			q.mu.Unlock()
			return stage.Part{}, fmt.Errorf("%w: the parse failed", errCutShort)
		case len(q.parts) > 0:
			p := q.parts[0]
			q.parts[0] = stage.Part{} // laid out parts are not kept alive here
			q.parts = q.parts[1:]
			q.mu.Unlock()
			return p, nil
		case q.done:
			q.mu.Unlock()
			return stage.Part{}, io.EOF
		}
		q.mu.Unlock()
		select {
		case <-q.ready:
		case <-ctx.Done():
			return stage.Part{}, ctx.Err()
		}
	}
}

func (q *partQueue) Rest() stage.Document {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.rest
}
