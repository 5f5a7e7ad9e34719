package pipeline

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// partFakes adds the parts calls to fakes: the parser hands over the blocks
// of parts one part at a time, and the renderer joins what it reads.
type partFakes struct {
	*fakes
	parts [][]string // paragraphs' texts, part by part
	// betweenParts runs in the parser after emitting part i.
	betweenParts func(ctx context.Context, i int) error
	// onPart runs in the renderer when part i arrives.
	onPart func(ctx context.Context, i int) error

	mu       sync.Mutex
	laidOut  []string
	rest     stage.Document
	parseCtx context.Context
}

func para(text string) *stage.Node {
	return &stage.Node{Kind: stage.KindParagraph, Children: []*stage.Node{{Kind: stage.KindText, Text: text}}}
}

func (f *partFakes) ParseParts(ctx context.Context, r *stage.ParseRequest, emit func(stage.Part) error) (*stage.ParseResponse, error) {
	f.record("parse")
	f.mu.Lock()
	f.lastParse, f.parseCtx = r, ctx
	f.mu.Unlock()
	if err := f.hook(f.onParse, ctx); err != nil {
		return nil, err
	}
	for i, texts := range f.parts {
		root := &stage.Node{Kind: stage.KindDocument}
		for _, t := range texts {
			root.Children = append(root.Children, para(t))
		}
		if err := emit(stage.Part{Root: root}); err != nil {
			return nil, err
		}
		if f.betweenParts != nil {
			if err := f.betweenParts(ctx, i); err != nil {
				return nil, err
			}
		}
	}
	if f.parseErr != nil {
		return nil, f.parseErr
	}
	return &stage.ParseResponse{Document: stage.Document{Title: "Report / Q1"}}, nil
}

func (f *partFakes) RenderParts(ctx context.Context, r *stage.RenderRequest, parts stage.Parts) (*stage.RenderResponse, error) {
	f.record("render")
	f.mu.Lock()
	f.lastRender = r
	f.mu.Unlock()
	if err := f.hook(f.onRender, ctx); err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		p, err := parts.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if f.onPart != nil {
			if err := f.onPart(ctx, i); err != nil {
				return nil, err
			}
		}
		f.mu.Lock()
		for _, c := range p.Root.Children {
			f.laidOut = append(f.laidOut, c.Children[0].Text)
		}
		f.mu.Unlock()
	}
	if f.renderErr != nil {
		return nil, f.renderErr
	}
	f.mu.Lock()
	f.rest = parts.Rest()
	f.mu.Unlock()
	return &stage.RenderResponse{PDF: f.pdf, Pages: 3}, nil
}

// failures records the stages observed failing.
type failures struct{ observations }

func (f *failures) observe(ctx context.Context, name string, d time.Duration, err error) {
	if err != nil {
		f.observations.observe(ctx, name, d, err)
	}
}

func partStages(f *partFakes) Stages {
	return Stages{Meter: f, Parser: f, Styler: f, Renderer: f, Sink: f,
		RendererCaps: []string{stage.CapReadsTree, stage.CapReadsTreeParts}}
}

func newPartFakes(parts ...[]string) *partFakes {
	return &partFakes{fakes: &fakes{pdf: []byte("%PDF-1.7 parts")}, parts: parts}
}

// The renderer gets each part while the parser is still at work: the parser
// does not hand over its second part before the renderer has the first.
func TestRenderReadsPartsWhileParsing(t *testing.T) {
	f := newPartFakes([]string{"a", "b"}, []string{"c"}, []string{"d"})
	got := make([]chan struct{}, len(f.parts))
	for i := range got {
		got[i] = make(chan struct{})
	}
	f.onPart = func(_ context.Context, i int) error { close(got[i]); return nil }
	f.betweenParts = func(_ context.Context, i int) error {
		if i+1 < len(got) {
			return waitFor(t, got[i])(context.Background())
		}
		return nil
	}
	obs := &observations{}
	res, err := New(obs.observe).Run(context.Background(), partStages(f), Job{Hosted: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages != 3 || string(f.stored) != "%PDF-1.7 parts" || res.FileID != "file1" {
		t.Fatalf("result = %+v, stored %q", res, f.stored)
	}
	if want := []string{"a", "b", "c", "d"}; !slices.Equal(f.laidOut, want) {
		t.Fatalf("laid out %v, want %v", f.laidOut, want)
	}
	if f.rest.Title != "Report / Q1" {
		t.Fatalf("the renderer's rest of the document = %+v", f.rest)
	}
	if !f.lastParse.SkipHTML || !f.lastStyle.SkipHTML || f.lastStyle.Document.Root != nil {
		t.Fatalf("parse %+v / style %+v: a tree renderer needs no HTML", f.lastParse, f.lastStyle)
	}
	// The stored file is named from the title, which came with the rest.
	if got := f.called(); got != "reserve parse style render store:Report - Q1.pdf commit" {
		t.Fatalf("calls = %q", got)
	}
	if o := obs.names(); len(o) != 6 { // the meter twice
		t.Fatalf("observed %v", o)
	}
}

// The parse runs beside the reservation, and the render only once the
// credits are reserved: the meter answers only once the parser is done,
// and the parser gives a render that would start early time to take its
// first part first.
func TestRenderWaitsForReservation(t *testing.T) {
	f := newPartFakes([]string{"a"}, []string{"b"})
	first, parsed := make(chan struct{}), make(chan struct{})
	f.onPart = func(_ context.Context, i int) error {
		if i == 0 {
			close(first)
		}
		return nil
	}
	f.betweenParts = func(_ context.Context, i int) error {
		if i == 0 {
			select {
			case <-first:
			case <-time.After(200 * time.Millisecond):
			}
		}
		if i == len(f.parts)-1 {
			close(parsed)
		}
		return nil
	}
	var mu sync.Mutex
	reserved := false
	f.onReserve = func(ctx context.Context) error {
		err := waitFor(t, parsed)(ctx)
		mu.Lock()
		reserved = true
		mu.Unlock()
		return err
	}
	f.onRender = func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if !reserved {
			t.Error("the render started before the credits were reserved")
		}
		return nil
	}
	if _, err := New(nil).Run(context.Background(), partStages(f), Job{}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b"}; !slices.Equal(f.laidOut, want) {
		t.Fatalf("laid out %v, want %v", f.laidOut, want)
	}
}

// A refused reservation renders nothing; the parse, done beside it, is no
// failure, and nothing is refunded or answered.
func TestRefusedReservationRendersNothing(t *testing.T) {
	f := newPartFakes([]string{"a"}, []string{"b"})
	f.reserveErr = stage.Errorf(stage.CodeForbidden, "out of credits")
	obs := &failures{}
	res, err := New(obs.observe).Run(context.Background(), partStages(f), Job{})
	if stage.CodeOf(err) != stage.CodeForbidden || res != nil {
		t.Fatalf("res = %v, err = %v, want the reservation's error", res, err)
	}
	if o := obs.names(); !slices.Equal(o, []string{stage.NameMeter}) {
		t.Fatalf("failures observed: %v", o)
	}
	if got := f.called(); strings.Contains(got, "render") || strings.Contains(got, "refund") || strings.Contains(got, "commit") {
		t.Fatalf("calls = %q", got)
	}
}

// A parse that fails after handing over parts fails the run with its own
// error, though the renderer was cut short; only the parse is a failure.
func TestPartsParseErrorWins(t *testing.T) {
	f := newPartFakes([]string{"a"}, []string{"b"})
	f.parseErr = stage.Errorf(stage.CodeTooLarge, "the document is too complex")
	obs := &failures{}
	_, err := New(obs.observe).Run(context.Background(), partStages(f), Job{})
	if stage.CodeOf(err) != stage.CodeTooLarge || !strings.Contains(err.Error(), "too complex") {
		t.Fatalf("err = %v, want the parse's", err)
	}
	if failed := obs.names(); !slices.Equal(failed, []string{stage.NameParse}) {
		t.Fatalf("failed stages %v, want only parse", failed)
	}
	if got := f.called(); got != "reserve parse style render refund:too_large" {
		t.Fatalf("calls = %q", got)
	}
}

// A render that fails stops the parse at once; the run fails with the
// render's error, and the cut parse is no failure.
func TestRenderFailureStopsParse(t *testing.T) {
	f := newPartFakes([]string{"a"}, []string{"b"}, []string{"c"})
	f.onPart = func(context.Context, int) error { return stage.Errorf(stage.CodeTooLarge, "too many pages") }
	parseCut := make(chan struct{})
	f.betweenParts = func(ctx context.Context, i int) error {
		select {
		case <-ctx.Done():
			close(parseCut)
			return ctx.Err()
		case <-time.After(5 * time.Second):
			t.Error("the parse went on after the render failed")
			return nil
		}
	}
	obs := &failures{}
	_, err := New(obs.observe).Run(context.Background(), partStages(f), Job{})
	if stage.CodeOf(err) != stage.CodeTooLarge || !strings.Contains(err.Error(), "pages") {
		t.Fatalf("err = %v, want the render's", err)
	}
	<-parseCut
	if failed := obs.names(); !slices.Equal(failed, []string{stage.NameRender}) {
		t.Fatalf("failed stages %v, want only render", failed)
	}
}

// A run whose stages do not all speak parts takes the ordinary path.
func TestPartsNeedTheCapability(t *testing.T) {
	f := newPartFakes([]string{"a"})
	st := partStages(f)
	st.RendererCaps = []string{stage.CapReadsTree}
	if _, err := New(nil).Run(context.Background(), st, Job{}); err != nil {
		t.Fatal(err)
	}
	if len(f.laidOut) != 0 || f.lastRender.Document.Root == nil {
		t.Fatal("a renderer without reads-tree-parts was sent parts")
	}
}

// The queue never makes the parser wait, hands parts over in order and
// drops them once taken.
func TestPartQueue(t *testing.T) {
	q := newPartQueue()
	for _, s := range []string{"a", "b", "c"} {
		if err := q.push(stage.Part{Root: para(s)}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	backing := q.parts
	for _, s := range []string{"a", "b"} {
		p, err := q.Next(ctx)
		if err != nil || p.Root.Children[0].Text != s {
			t.Fatalf("Next = %+v, %v; want %s", p, err, s)
		}
	}
	if backing[0].Root != nil || backing[1].Root != nil {
		t.Fatal("a part taken is still held")
	}
	done := make(chan error, 1)
	go func() {
		if _, err := q.Next(ctx); err != nil {
			done <- err
			return
		}
		_, err := q.Next(ctx)
		done <- err
	}()
	q.finish(stage.Document{Title: "t"})
	if err := <-done; !errors.Is(err, io.EOF) || q.Rest().Title != "t" {
		t.Fatalf("after the last part: %v, rest %+v", err, q.Rest())
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := newPartQueue().Next(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiting Next ignores its context: %v", err)
	}
	failed := newPartQueue()
	failed.fail()
	if _, err := failed.Next(ctx); !errors.Is(err, errCutShort) {
		t.Fatalf("after a failed parse: %v", err)
	}
}
