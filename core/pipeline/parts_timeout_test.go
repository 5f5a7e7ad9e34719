package pipeline

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// The render timeout bounds one render (Stages.RenderTimeout). In parts the
// render starts before the parse has ended, so the time the parse takes
// must not count against it: a parse slower than the render timeout, with
// a render that itself takes no time, succeeds on the ordinary path and
// must succeed in parts too. And if anything fails, a slow parse must not
// be reported (and observed) as a failed render.
func TestRenderTimeoutExcludesParse(t *testing.T) {
	slowParse := func(ctx context.Context, i int) error {
		select {
		case <-time.After(300 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}

	// The ordinary path: the parse takes 300 ms, the render nothing.
	plain := newPartFakes([]string{"a"}, []string{"b"})
	plain.onParse = func(ctx context.Context) error { return slowParse(ctx, 0) }
	st := partStages(plain)
	st.RendererCaps = []string{stage.CapReadsTree}
	st.RenderTimeout = 100 * time.Millisecond
	if _, err := New(nil).Run(context.Background(), st, Job{}); err != nil {
		t.Fatalf("ordinary path: %v", err)
	}

	// The same stages in parts.
	f := newPartFakes([]string{"a"}, []string{"b"})
	f.betweenParts = slowParse
	st = partStages(f)
	st.RenderTimeout = 100 * time.Millisecond
	obs := &failures{}
	_, err := New(obs.observe).Run(context.Background(), st, Job{})
	if err != nil {
		t.Errorf("in parts: %v (code %v); failed stages observed: %v", err, stage.CodeOf(err), obs.names())
	}
	if o := obs.names(); slices.Contains(o, stage.NameRender) {
		t.Errorf("a slow parse was observed as a failed render: %v", o)
	}
}

// A render that runs past the render timeout once the parse has ended still
// fails as a render timeout.
func TestRenderTimeoutAfterParse(t *testing.T) {
	f := newPartFakes([]string{"a"}, []string{"b"})
	f.onPart = func(ctx context.Context, i int) error {
		if i == 0 {
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	}
	st := partStages(f)
	st.RenderTimeout = 50 * time.Millisecond
	obs := &failures{}
	_, err := New(obs.observe).Run(context.Background(), st, Job{})
	if stage.CodeOf(err) != stage.CodeTimeout {
		t.Fatalf("err = %v (code %v), want a timeout", err, stage.CodeOf(err))
	}
	if o := obs.names(); !slices.Equal(o, []string{stage.NameRender}) {
		t.Fatalf("failed stages %v, want only render", o)
	}
	if got := f.called(); got != "reserve parse style render refund:timeout" {
		t.Fatalf("calls = %q", got)
	}
}
