package pipeline

import (
	"context"
	"slices"
	"strings"
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

// Each stage's own timeout (parse.timeout, style.timeout, meter.timeout)
// bounds its call within a request whose deadline is far off: the run
// fails as a timeout of that stage, observed as its failure, and whatever
// was reserved is refunded.
func TestStageTimeouts(t *testing.T) {
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	for _, tc := range []struct {
		name  string
		parts bool
		set   func(*Stages, *fakes)
	}{
		{stage.NameParse, false, func(st *Stages, f *fakes) { st.ParseTimeout, f.onParse = 50*time.Millisecond, hang }},
		{stage.NameParse, true, func(st *Stages, f *fakes) { st.ParseTimeout, f.onParse = 50*time.Millisecond, hang }},
		{stage.NameStyle, false, func(st *Stages, f *fakes) { st.StyleTimeout, f.onStyle = 50*time.Millisecond, hang }},
		{stage.NameMeter, false, func(st *Stages, f *fakes) { st.MeterTimeout, f.onReserve = 50*time.Millisecond, hang }},
	} {
		pf := newPartFakes([]string{"a"})
		st := partStages(pf)
		if !tc.parts {
			st.RendererCaps = []string{stage.CapReadsTree}
		}
		tc.set(&st, pf.fakes)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		obs := &failures{}
		start := time.Now()
		_, err := New(obs.observe).Run(ctx, st, Job{})
		cancel()
		if stage.CodeOf(err) != stage.CodeTimeout || time.Since(start) > 10*time.Second {
			t.Errorf("%s (parts %v): err %v after %v, want a timeout at its bound", tc.name, tc.parts, err, time.Since(start))
		}
		if o := obs.names(); !slices.Contains(o, tc.name) {
			t.Errorf("%s (parts %v): failed stages observed %v", tc.name, tc.parts, o)
		}
		if got := pf.called(); tc.name != stage.NameMeter && !strings.Contains(got, "refund:") {
			t.Errorf("%s (parts %v): calls %q, no refund", tc.name, tc.parts, got)
		}
	}
}
