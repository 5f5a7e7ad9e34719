package pipeline

import (
	"bytes"
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

// fakes records calls; function-field fakes for this unit test only (the
// end-to-end tests in host run the real plugins).
type fakes struct {
	mu         sync.Mutex // parse and style run beside reserve
	calls      []string
	reserveErr error
	parseErr   error
	// hooks, when set, run inside the call before it answers.
	onReserve, onParse, onStyle, onCommit, onRender func(ctx context.Context) error
	renderErr                                       error
	pdf                                             []byte
	replay                                          *stage.Replay
	held                                            time.Duration // what Reserve says of its reservation
	committed                                       string
	stored                                          []byte
	storeAnswer                                     *stage.StoreResponse // what Store returns, when set
	lastRender                                      *stage.RenderRequest
	lastParse                                       *stage.ParseRequest
	lastStyle                                       *stage.StyleRequest
}

func (f *fakes) record(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

// called lists the calls, with those that run concurrently (reserve, parse,
// style) in a fixed order.
func (f *fakes) called() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	rank := map[string]int{"reserve": 0, "parse": 1, "style": 2}
	calls := slices.Clone(f.calls)
	slices.SortStableFunc(calls, func(a, b string) int {
		ra, ok := rank[a]
		if !ok {
			ra = 3
		}
		rb, ok := rank[b]
		if !ok {
			rb = 3
		}
		return ra - rb
	})
	return strings.Join(calls, " ")
}

func (f *fakes) hook(fn func(context.Context) error, ctx context.Context) error {
	if fn == nil {
		return nil
	}
	return fn(ctx)
}

func (f *fakes) Reserve(ctx context.Context, r *stage.ReserveRequest) (*stage.ReserveResponse, error) {
	f.record("reserve")
	if err := f.hook(f.onReserve, ctx); err != nil {
		return nil, err
	}
	if f.reserveErr != nil {
		return nil, f.reserveErr
	}
	return &stage.ReserveResponse{ReservationID: "r1", Replay: f.replay, Held: f.held}, nil
}
func (f *fakes) Commit(ctx context.Context, r *stage.CommitRequest) (*stage.CommitResponse, error) {
	f.record("commit")
	f.committed = r.Result
	if err := f.hook(f.onCommit, ctx); err != nil {
		return nil, err
	}
	return &stage.CommitResponse{}, nil
}
func (f *fakes) Refund(ctx context.Context, r *stage.RefundRequest) (*stage.RefundResponse, error) {
	f.record("refund:" + r.Reason)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return &stage.RefundResponse{}, nil
}
func (f *fakes) Account(context.Context, *stage.AccountRequest) (*stage.AccountResponse, error) {
	return nil, nil
}
func (f *fakes) Parse(ctx context.Context, r *stage.ParseRequest) (*stage.ParseResponse, error) {
	f.record("parse")
	f.lastParse = r
	if err := f.hook(f.onParse, ctx); err != nil {
		return nil, err
	}
	if f.parseErr != nil {
		return nil, f.parseErr
	}
	return &stage.ParseResponse{Document: stage.Document{Title: "Report / Q1", Root: &stage.Node{Kind: stage.KindDocument}}}, nil
}
func (f *fakes) Style(ctx context.Context, r *stage.StyleRequest) (*stage.StyleResponse, error) {
	f.record("style")
	f.lastStyle = r
	if err := f.hook(f.onStyle, ctx); err != nil {
		return nil, err
	}
	return &stage.StyleResponse{HTML: "<html>"}, nil
}
func (f *fakes) Render(ctx context.Context, r *stage.RenderRequest) (*stage.RenderResponse, error) {
	f.record("render")
	f.lastRender = r
	if err := f.hook(f.onRender, ctx); err != nil {
		return nil, err
	}
	if f.renderErr != nil {
		return nil, f.renderErr
	}
	return &stage.RenderResponse{PDF: f.pdf, Pages: 2}, nil
}
func (f *fakes) Store(_ context.Context, r *stage.StoreRequest) (*stage.StoreResponse, error) {
	f.record("store:" + r.Filename)
	f.stored = r.PDF
	if f.storeAnswer != nil {
		return f.storeAnswer, nil
	}
	return &stage.StoreResponse{ID: "file1"}, nil
}
func (f *fakes) Delete(_ context.Context, r *stage.DeleteRequest) error {
	f.record("delete:" + r.ID)
	return nil
}
func (f *fakes) Open(context.Context, *stage.OpenRequest) (*stage.OpenResponse, error) {
	f.record("open")
	return &stage.OpenResponse{Body: io.NopCloser(bytes.NewReader(f.stored))}, nil
}

// observations records the stages a pipeline reports, from any goroutine.
type observations struct {
	mu    sync.Mutex
	calls []string
}

func (o *observations) observe(_ context.Context, name string, _ time.Duration, _ error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, name)
}

func (o *observations) names() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.calls)
}

func stagesOf(f *fakes) Stages {
	return Stages{Meter: f, Parser: f, Styler: f, Renderer: f, Sink: f}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name      string
		job       Job
		renderErr error
		wantCalls string
		wantCode  stage.Code
	}{
		{"binary", Job{}, nil, "reserve parse style render commit", -1},
		{"hosted", Job{Hosted: true}, nil, "reserve parse style render store:Report - Q1.pdf commit", -1},
		{"render fails refunds", Job{}, stage.Errorf(stage.CodeTimeout, "slow"), "reserve parse style render refund:timeout", stage.CodeTimeout},
		{"too large refunds", Job{Hosted: true, MaxHostedBytes: 10}, nil, "reserve parse style render refund:too_large", stage.CodeTooLarge},
		{"too large binary passes", Job{MaxHostedBytes: 10}, nil, "reserve parse style render commit", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakes{pdf: []byte("%PDF-1.7 twenty bytes"), renderErr: tt.renderErr}
			obs := &observations{}
			p := New(obs.observe)
			res, err := p.Run(context.Background(), stagesOf(f), tt.job)
			if got := f.called(); got != tt.wantCalls {
				t.Fatalf("calls = %q, want %q", got, tt.wantCalls)
			}
			if tt.wantCode >= 0 {
				if stage.CodeOf(err) != tt.wantCode {
					t.Fatalf("err = %v, want code %v", err, tt.wantCode)
				}
				var se *stage.Error
				if tt.wantCode == stage.CodeTooLarge && (!errors.As(err, &se) || se.Details["size"] != "21 B (limit 10 B)") {
					t.Fatalf("size detail: %+v", se)
				}
				return
			}
			if observed := obs.names(); err != nil || res.Pages != 2 || len(observed) != len(f.calls) {
				t.Fatalf("res=%+v err=%v observed=%v", res, err, observed)
			}
		})
	}
}

func TestRefundSurvivesCanceledRequest(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakes{renderErr: stage.Errorf(stage.CodeInternal, "x")}
	f.pdf = nil
	f.onReserve = func(context.Context) error { cancel(); return nil } // the client leaves
	_, _ = New(nil).Run(ctx, stagesOf(f), Job{})
	last := f.calls[len(f.calls)-1]
	if !strings.HasPrefix(last, "refund") {
		t.Fatalf("no refund: %v", f.calls)
	}
}

// A request whose client has left before its credits are reserved makes
// no reservation.
func TestNoReservationForAGoneClient(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fakes{}
	if _, err := New(nil).Run(ctx, stagesOf(f), Job{}); err == nil {
		t.Fatal("a request whose client left succeeded")
	}
	if strings.Contains(f.called(), "reserve") {
		t.Fatalf("calls %q", f.called())
	}
}

// lostReply is what a gRPC call cut short by its context answers after the
// store has acted: the context's error.
func lostReply(cancel context.CancelFunc) func(context.Context) error {
	return func(ctx context.Context) error {
		cancel()
		return ctx.Err()
	}
}

// The client leaving while credits are reserved does not lose the
// reservation's name: the call runs to its end and the reservation is
// refunded at once, not held until it expires.
func TestReservationOutlivesTheClient(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakes{onReserve: lostReply(cancel)}
	if _, err := New(nil).Run(ctx, stagesOf(f), Job{}); err == nil {
		t.Fatal("a request whose client left succeeded")
	}
	if got := f.called(); !strings.Contains(got, "reserve") || !strings.Contains(got, "refund:") {
		t.Fatalf("calls %q: the reservation was not refunded", got)
	}
}

// The client leaving while the charge is committed does not turn a made
// charge into an error that says nothing was charged: the call runs to its
// end and the conversion is delivered as charged.
func TestCommitOutlivesTheClient(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakes{pdf: []byte("%PDF-"), onCommit: lostReply(cancel)}
	res, err := New(nil).Run(ctx, stagesOf(f), Job{})
	if err != nil || res == nil {
		t.Fatalf("charged conversion answered %v", err)
	}
	if got := f.called(); strings.Contains(got, "refund") {
		t.Fatalf("calls %q: a committed charge was refunded", got)
	}
}

func TestIdempotentBinaryReplay(t *testing.T) {
	f := &fakes{pdf: []byte("%PDF-1.7 original")}
	job := Job{IdempotencyKey: "k", RequestHash: "h", ReplayTTL: time.Hour}
	first, err := New(nil).Run(context.Background(), stagesOf(f), job)
	if err != nil || first.FileID != "file1" {
		t.Fatalf("first: %+v %v", first, err)
	}
	f.replay = &stage.Replay{Result: f.committed}
	f.calls = nil
	again, err := New(nil).Run(context.Background(), stagesOf(f), job)
	if err != nil || !again.Replayed || !bytes.Equal(again.PDF, first.PDF) {
		t.Fatalf("replay: %+v %v", again, err)
	}
	// Parsing may have started beside the reservation; nothing after it
	// runs, and nothing is charged.
	if got := f.called(); !strings.HasPrefix(got, "reserve") || !strings.HasSuffix(got, " open") ||
		strings.Contains(got, "render") || strings.Contains(got, "commit") || strings.Contains(got, "store") {
		t.Fatalf("replay calls = %q", got)
	}
}

func TestFilename(t *testing.T) {
	for in, want := range map[string]string{"": "document.pdf", "Hi": "Hi.pdf", "../etc/passwd": "etc-passwd.pdf", `a"b`: "a-b.pdf",
		"invoice\u202Efdp.exe": "invoicefdp.exe.pdf", "\u2067\u200fשלום\u2069": "שלום.pdf", "\u202e": "document.pdf"} {
		if got := Filename(in); got != want {
			t.Errorf("Filename(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReplayOfLostResultIsClear(t *testing.T) {
	f := &lostSink{fakes: fakes{replay: &stage.Replay{Result: `{"fileId":"gone"}`}}}
	_, err := New(nil).Run(context.Background(), Stages{Meter: f, Parser: f, Styler: f, Renderer: f, Sink: f}, Job{IdempotencyKey: "k"})
	if stage.CodeOf(err) != stage.CodeInvalid || !strings.Contains(stage.SafeMessage(err), "new key") {
		t.Fatalf("err = %v", err)
	}
}

// A hosted replay checks the file behind its URL, as a binary replay
// reads it: a replay never hands out a URL whose file has expired.
func TestHostedReplayOfLostResultIsClear(t *testing.T) {
	f := &lostSink{fakes: fakes{replay: &stage.Replay{Result: `{"fileId":"gone","url":"https://x/v1/files/gone"}`}}}
	_, err := New(nil).Run(context.Background(), Stages{Meter: f, Parser: f, Styler: f, Renderer: f, Sink: f}, Job{IdempotencyKey: "k", Hosted: true})
	if stage.CodeOf(err) != stage.CodeInvalid || !strings.Contains(stage.SafeMessage(err), "new key") {
		t.Fatalf("err = %v", err)
	}
	ok := &fakes{replay: &stage.Replay{Result: `{"fileId":"here","url":"https://x/v1/files/here"}`}}
	res, err := New(nil).Run(context.Background(), stagesOf(ok), Job{IdempotencyKey: "k", Hosted: true})
	if err != nil || res.URL != "https://x/v1/files/here" || !strings.Contains(ok.called(), "open") {
		t.Fatalf("replay of a kept file: %+v, %v, calls %q", res, err, ok.called())
	}
}

type lostSink struct{ fakes }

func (l *lostSink) Open(context.Context, *stage.OpenRequest) (*stage.OpenResponse, error) {
	return nil, stage.Errorf(stage.CodeNotFound, "no such file")
}

func TestRendererGetsOnlyWhatItReads(t *testing.T) {
	for _, tt := range []struct {
		caps           []string
		wantHTML, tree bool
	}{
		{nil, true, true},
		{[]string{stage.CapReadsHTML, stage.CapCSS}, true, false},
		{[]string{stage.CapReadsTree}, false, true},
		{[]string{stage.CapReadsHTML, stage.CapReadsTree}, true, true},
	} {
		f := &fakes{pdf: []byte("%PDF-")}
		st := stagesOf(f)
		st.RendererCaps = tt.caps
		if _, err := New(nil).Run(context.Background(), st, Job{}); err != nil {
			t.Fatal(err)
		}
		if (f.lastRender.HTML != "") != tt.wantHTML || (f.lastRender.Document.Root != nil) != tt.tree {
			t.Errorf("caps %v: html %v tree %v", tt.caps, f.lastRender.HTML != "", f.lastRender.Document.Root != nil)
		}
		treeOnly := tt.tree && !tt.wantHTML
		if f.lastParse.SkipHTML != treeOnly || f.lastStyle.SkipHTML != treeOnly {
			t.Errorf("caps %v: parse skip %v, style skip %v, want %v", tt.caps, f.lastParse.SkipHTML, f.lastStyle.SkipHTML, treeOnly)
		}
		if f.lastStyle.Document.Root != nil {
			t.Errorf("caps %v: the styler was sent the tree", tt.caps)
		}
	}
}

func TestOverLimit(t *testing.T) {
	for _, tt := range []struct {
		size, limit int64
		want        string
	}{
		{61400, 60000, "61.4 kB (limit 60.0 kB)"},
		{10485790, 10485760, "10485790 bytes (limit 10485760 bytes)"},
	} {
		if got := OverLimit(tt.size, tt.limit); got != tt.want {
			t.Errorf("OverLimit(%d, %d) = %q, want %q", tt.size, tt.limit, got, tt.want)
		}
	}
}

// waitFor returns a hook that blocks until other is closed, failing the
// call if that never happens: had the stages run one after another, the
// hook would wait for a call that comes only after it returns.
func waitFor(t *testing.T, other chan struct{}) func(context.Context) error {
	return func(ctx context.Context) error {
		select {
		case <-other:
			return nil
		case <-time.After(5 * time.Second):
			t.Error("the other stage was not called meanwhile")
			return stage.Errorf(stage.CodeTimeout, "waited")
		}
	}
}

func closeOnCall(ch chan struct{}) func(context.Context) error {
	var once sync.Once
	return func(context.Context) error { once.Do(func() { close(ch) }); return nil }
}

func TestParseRunsBesideReserve(t *testing.T) {
	parsing := make(chan struct{})
	f := &fakes{pdf: []byte("%PDF-")}
	f.onParse = closeOnCall(parsing)
	f.onReserve = waitFor(t, parsing)
	if _, err := New(nil).Run(context.Background(), stagesOf(f), Job{}); err != nil {
		t.Fatal(err)
	}
	if got := f.called(); got != "reserve parse style render commit" {
		t.Fatalf("calls = %q", got)
	}
}

// A renderer that reads only the tree reads only the styler's tokens, which
// do not depend on the document: styling runs beside the parse, and the
// styler is sent no document.
func TestTreeRendererStylesBesideParse(t *testing.T) {
	styling := make(chan struct{})
	f := &fakes{pdf: []byte("%PDF-")}
	f.onStyle = closeOnCall(styling)
	f.onParse = waitFor(t, styling)
	st := stagesOf(f)
	st.RendererCaps = []string{stage.CapReadsTree}
	if _, err := New(nil).Run(context.Background(), st, Job{}); err != nil {
		t.Fatal(err)
	}
	if !f.lastStyle.SkipHTML || f.lastStyle.Document.Title != "" || f.lastStyle.Document.Root != nil {
		t.Fatalf("style request = %+v", f.lastStyle)
	}
	if f.lastRender.Document.Root == nil || f.lastRender.Document.Title != "Report / Q1" {
		t.Fatal("the renderer lost the parsed document")
	}
}

// A request that cannot be charged stops its parse, and the cancelled call
// is neither counted as a stage failure nor left running.
func TestFailedReserveAbandonsParse(t *testing.T) {
	parsing, parseDone := make(chan struct{}), make(chan struct{})
	f := &fakes{reserveErr: stage.Errorf(stage.CodeForbidden, "out of credits")}
	f.onParse = func(ctx context.Context) error {
		defer close(parseDone)
		close(parsing)
		<-ctx.Done()
		return ctx.Err()
	}
	f.onReserve = waitFor(t, parsing)
	obs := &observations{}
	p := New(obs.observe)
	_, err := p.Run(context.Background(), stagesOf(f), Job{})
	if stage.CodeOf(err) != stage.CodeForbidden {
		t.Fatalf("err = %v, want the reservation's", err)
	}
	select {
	case <-parseDone:
	default:
		t.Fatal("the parse outlived the request")
	}
	if observed := obs.names(); !slices.Equal(observed, []string{stage.NameMeter}) {
		t.Fatalf("observed %v; the abandoned parse must not count as a failure", observed)
	}
	if got := f.called(); strings.Contains(got, "render") || strings.Contains(got, "refund") {
		t.Fatalf("calls = %q", got)
	}
}

func TestParseFailureRefunds(t *testing.T) {
	f := &fakes{parseErr: stage.Errorf(stage.CodeInvalid, "too deep")}
	_, err := New(nil).Run(context.Background(), stagesOf(f), Job{})
	if stage.CodeOf(err) != stage.CodeInvalid {
		t.Fatalf("err = %v", err)
	}
	if got := f.called(); got != "reserve parse refund:invalid" {
		t.Fatalf("calls = %q", got)
	}
}

// When both fail, the client hears about its credits, as it would had the
// reservation come first.
func TestReserveErrorWinsOverParseError(t *testing.T) {
	f := &fakes{reserveErr: stage.Errorf(stage.CodeForbidden, "out of credits"), parseErr: stage.Errorf(stage.CodeInvalid, "bad")}
	parsed := make(chan struct{})
	f.onParse = closeOnCall(parsed)
	f.onReserve = waitFor(t, parsed)
	if _, err := New(nil).Run(context.Background(), stagesOf(f), Job{}); stage.CodeOf(err) != stage.CodeForbidden {
		t.Fatalf("err = %v", err)
	}
}

// A tree renderer's styling carries no document, so equal requests to the
// same styler are answered once; anything that differs is asked again.
func TestTokensReusedForTreeRenderers(t *testing.T) {
	styles := func(f *fakes) int {
		return strings.Count(f.called(), "style")
	}
	p := New(nil)
	run := func(f *fakes, caps []string, job Job) {
		t.Helper()
		st := stagesOf(f)
		st.RendererCaps = caps
		if _, err := p.Run(context.Background(), st, job); err != nil {
			t.Fatal(err)
		}
	}
	tree := []string{stage.CapReadsTree}
	a4 := stage.PageSize{Name: "A4", WidthPt: 595.28, HeightPt: 841.89}
	job := Job{Theme: "modern", Page: a4, Numbering: stage.NumberingCenter}

	f := &fakes{pdf: []byte("%PDF-")}
	run(f, tree, job)
	run(f, tree, job)
	if n := styles(f); n != 1 {
		t.Fatalf("styled %d times for two equal requests", n)
	}
	for _, other := range []Job{
		{Theme: "basic", Page: a4, Numbering: stage.NumberingCenter},
		{Theme: "modern", Page: stage.PageSize{Name: "Letter", WidthPt: 612, HeightPt: 792}, Numbering: stage.NumberingCenter},
		{Theme: "modern", Page: a4, Numbering: stage.NumberingNone},
		{Theme: "modern", Page: a4, Numbering: stage.NumberingCenter, Watermark: "FREE PLAN"},
	} {
		before := styles(f)
		run(f, tree, other)
		if styles(f) != before+1 {
			t.Fatalf("%+v was answered from another request's tokens", other)
		}
	}

	relaunched := &fakes{pdf: []byte("%PDF-")}
	run(relaunched, tree, job)
	if n := styles(relaunched); n != 1 {
		t.Fatal("a new styler was answered from the old one's tokens")
	}

	html := &fakes{pdf: []byte("%PDF-")}
	run(html, nil, job)
	run(html, nil, job)
	if n := styles(html); n != 2 {
		t.Fatalf("a renderer of HTML got cached styling (%d calls for 2 runs)", n)
	}
}

// A preparation started on a guess of the plan (the host's early start for
// a recent key) is redone when the plan turns out to mark pages otherwise:
// styling reads the watermark.
func TestFinishRedoesPreparationForAnotherWatermark(t *testing.T) {
	f := &fakes{pdf: []byte("%PDF-")}
	p := New(nil)
	guess := Job{Theme: "modern"}
	prep := p.Start(context.Background(), stagesOf(f), guess)
	job := guess
	job.Watermark = "mdpress free plan"
	if _, err := p.Finish(context.Background(), stagesOf(f), job, prep); err != nil {
		t.Fatal(err)
	}
	if f.lastStyle.Watermark != job.Watermark || f.lastRender.Watermark != job.Watermark {
		t.Fatalf("styled with %q, rendered with %q", f.lastStyle.Watermark, f.lastRender.Watermark)
	}
	if got := f.called(); strings.Count(got, "parse") != 2 {
		t.Fatalf("calls = %q, want the document prepared again", got)
	}
}

// Abandon stops a preparation nobody will finish and waits for it; its
// cancelled calls are not counted as failures.
func TestAbandonedPreparation(t *testing.T) {
	parsing := make(chan struct{})
	f := &fakes{}
	f.onParse = func(ctx context.Context) error {
		close(parsing)
		<-ctx.Done()
		return ctx.Err()
	}
	obs := &observations{}
	p := New(obs.observe)
	prep := p.Start(context.Background(), stagesOf(f), Job{})
	<-parsing
	prep.Abandon()
	if observed := obs.names(); len(observed) != 0 {
		t.Fatalf("observed %v", observed)
	}
}

// The operator's render timeout bounds a render within a longer request
// deadline, and the reservation is refunded.
func TestRenderTimeout(t *testing.T) {
	f := &fakes{onRender: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }}
	st := stagesOf(f)
	st.RenderTimeout = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := New(nil).Run(ctx, st, Job{})
	if stage.CodeOf(err) != stage.CodeTimeout || time.Since(start) > 10*time.Second {
		t.Fatalf("err %v after %v, want a timeout at the render's bound", err, time.Since(start))
	}
	if got := f.called(); !strings.Contains(got, "refund:") {
		t.Fatalf("calls %q: no refund", got)
	}
}

// TestFinishLeavesTheChargeToCommit: Finish renders and stores but charges
// nothing, so the host can answer first; Commit then charges, once.
func TestFinishLeavesTheChargeToCommit(t *testing.T) {
	f := &fakes{pdf: []byte("%PDF-1.7 twenty bytes"), held: 10 * time.Minute}
	p := New(nil)
	res, err := p.Finish(context.Background(), stagesOf(f), Job{}, p.Start(context.Background(), stagesOf(f), Job{}))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.called(); got != "reserve parse style render" {
		t.Fatalf("before the commit: calls %q; want nothing charged or refunded yet", got)
	}
	for range 2 {
		if err := res.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := f.called(), "reserve parse style render commit"; got != want {
		t.Fatalf("calls %q, want %q", got, want)
	}
}

// TestLateCommitOutlivesTheClient: the charge of an answered PDF is made
// even when the client has gone by then, and a charge that fails is left
// reserved, not refunded, for Recharge to make.
func TestLateCommitOutlivesTheClient(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakes{pdf: []byte("%PDF-1.7 twenty bytes"), held: 10 * time.Minute}
	p := New(nil)
	res, err := p.Finish(ctx, stagesOf(f), Job{}, p.Start(ctx, stagesOf(f), Job{}))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := res.Commit(); err != nil {
		t.Fatalf("commit after the client left: %v", err)
	}
	if got := f.called(); !strings.HasSuffix(got, "commit") {
		t.Fatalf("calls %q: the answered PDF was not charged", got)
	}

	down := true
	f = &fakes{pdf: []byte("%PDF-1.7 twenty bytes"), held: 10 * time.Minute, onCommit: func(context.Context) error {
		if down {
			return stage.Errorf(stage.CodeUnavailable, "store down")
		}
		return nil
	}}
	res, err = p.Finish(context.Background(), stagesOf(f), Job{}, p.Start(context.Background(), stagesOf(f), Job{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Commit(); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("commit: %v, want the meter's error", err)
	}
	if got := f.called(); !strings.HasSuffix(got, "render commit") {
		t.Fatalf("calls %q: a failed charge must stay reserved, for a retry", got)
	}
	down = false
	if err := res.Recharge()(context.Background()); err != nil {
		t.Fatalf("recharge: %v", err)
	}
	if got := f.called(); !strings.HasSuffix(got, "render commit commit") {
		t.Fatalf("calls %q: want the charge made again", got)
	}
}

// TestRechargeStopsBeforeTheRelease: a retried charge is not made once the
// meter could release the reservation before it ends: it would be refused,
// or race the release.
func TestRechargeStopsBeforeTheRelease(t *testing.T) {
	f := &fakes{pdf: []byte("%PDF-1.7 twenty bytes"), held: lateCommitMargin + 300*time.Millisecond,
		onCommit: func(context.Context) error { return stage.Errorf(stage.CodeUnavailable, "store down") }}
	p := New(nil)
	res, err := p.Finish(context.Background(), stagesOf(f), Job{}, p.Start(context.Background(), stagesOf(f), Job{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Commit(); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("commit: %v, want the meter's error", err)
	}
	time.Sleep(400 * time.Millisecond)
	if err := res.Recharge()(context.Background()); !errors.Is(err, ErrTooLate) {
		t.Fatalf("recharge past the margin: %v, want ErrTooLate", err)
	}
	if got := f.called(); got != "reserve parse style render commit" {
		t.Fatalf("calls %q: want no second commit", got)
	}
}

// TestCommitFirstNearRelease: when the meter does not say how long it holds
// the reservation, or holds it too briefly for a late commit to be safe,
// Finish charges before returning, and a failed charge is an error, so the
// PDF is never answered uncharged.
func TestCommitFirstNearRelease(t *testing.T) {
	for _, held := range []time.Duration{0, 100 * time.Millisecond, 30 * time.Second} {
		t.Run(held.String(), func(t *testing.T) {
			f := &fakes{pdf: []byte("%PDF-1.7 twenty bytes"), held: held}
			p := New(nil)
			res, err := p.Finish(context.Background(), stagesOf(f), Job{}, p.Start(context.Background(), stagesOf(f), Job{}))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := f.called(), "reserve parse style render commit"; got != want {
				t.Fatalf("calls %q, want %q", got, want)
			}
			if err := res.Commit(); err != nil || f.called() != "reserve parse style render commit" {
				t.Fatalf("a second commit: %v, calls %q", err, f.called())
			}

			f = &fakes{pdf: []byte("%PDF-1.7 twenty bytes"), held: held, onCommit: func(context.Context) error {
				return stage.Errorf(stage.CodeInvalid, "reservation expired")
			}}
			if _, err := p.Finish(context.Background(), stagesOf(f), Job{}, p.Start(context.Background(), stagesOf(f), Job{})); err == nil {
				t.Fatal("a PDF whose charge failed was returned")
			}
			if got := f.called(); !strings.HasSuffix(got, "commit refund:invalid") {
				t.Fatalf("calls %q", got)
			}
		})
	}
}

// TestLateCommitDoesNotWaitPastTheHold: an answer still being written when
// the reservation nears its release (a client slow to read), or a caller
// that never gets to Commit, does not leave the charge to a commit the
// meter would refuse, the PDF given away. Commit then returns that
// charge's outcome, and the PDF can no longer be refunded as undelivered.
func TestLateCommitDoesNotWaitPastTheHold(t *testing.T) {
	f := &fakes{pdf: []byte("%PDF-1.7 twenty bytes"), held: lateCommitMargin + 500*time.Millisecond}
	p := New(nil)
	res, err := p.Finish(context.Background(), stagesOf(f), Job{}, p.Start(context.Background(), stagesOf(f), Job{}))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.called(); got != "reserve parse style render" {
		t.Fatalf("calls %q: charged before the answer", got)
	}
	waitCalls(t, f, "reserve parse style render commit")
	if err := res.Commit(); err != nil || f.called() != "reserve parse style render commit" {
		t.Fatalf("commit: %v, calls %q", err, f.called())
	}
	if refunded, err := res.Undelivered("undelivered"); refunded || err != nil || f.called() != "reserve parse style render commit" {
		t.Fatalf("undelivered after the charge: %v %v, calls %q", refunded, err, f.called())
	}
}

// TestUndeliveredRefunds: an answer the caller could not deliver (the
// client gone in the middle of it, a shutdown cutting it) is refunded, not
// charged, and its copy kept for replays deleted, so that a retry with the
// same Idempotency-Key converts again rather than replaying a PDF no one
// paid for. The end of the request's context alone charges nothing: the
// caller says whether the answer went out. The result settles once.
func TestUndeliveredRefunds(t *testing.T) {
	for _, tt := range []struct {
		name string
		job  Job
		want string
	}{
		{"binary", Job{}, "reserve parse style render refund:undelivered"},
		{"idempotent", Job{IdempotencyKey: "k"}, "reserve parse style render store:Report - Q1.pdf refund:undelivered delete:file1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := &fakes{pdf: []byte("%PDF-1.7 twenty bytes"), held: 10 * time.Minute}
			p := New(nil)
			res, err := p.Finish(ctx, stagesOf(f), tt.job, p.Start(ctx, stagesOf(f), tt.job))
			if err != nil {
				t.Fatal(err)
			}
			before := f.called()
			cancel() // the client gone while its answer is written
			time.Sleep(50 * time.Millisecond)
			if got := f.called(); got != before {
				t.Fatalf("calls %q once the request ended: charged before the answer's outcome was known", got)
			}
			refunded, err := res.Undelivered("undelivered")
			if !refunded || err != nil {
				t.Fatalf("undelivered: %v %v", refunded, err)
			}
			if err := res.Commit(); err != nil {
				t.Fatalf("commit after the refund: %v", err)
			}
			if again, err := res.Undelivered("undelivered"); again || err != nil {
				t.Fatalf("second undelivered: %v %v", again, err)
			}
			if got := f.called(); got != tt.want {
				t.Fatalf("calls %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("replay", func(t *testing.T) {
		f := &fakes{pdf: []byte("%PDF-1.7 twenty bytes"), stored: []byte("%PDF-1.7 kept"), replay: &stage.Replay{Result: `{"fileId":"file1","pages":2}`}}
		p := New(nil)
		job := Job{IdempotencyKey: "k"}
		res, err := p.Finish(context.Background(), stagesOf(f), job, p.Start(context.Background(), stagesOf(f), job))
		if err != nil {
			t.Fatal(err)
		}
		if refunded, err := res.Undelivered("undelivered"); refunded || err != nil || strings.Contains(f.called(), "refund") {
			t.Fatalf("a replay refunded: %v %v, calls %q", refunded, err, f.called())
		}
	})
}

func waitCalls(t *testing.T, f *fakes, want string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); f.called() != want; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("calls %q, want %q without a call of Commit", f.called(), want)
		}
	}
}

// TestFailedResultDeleted: a stored file whose request then fails (the
// client gone before the answer, the charge refused) is deleted with the
// refund: no one was given its id, and it would stay until it expired. A
// failure after the answer keeps it: the client has its URL.
func TestFailedResultDeleted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	gone := &fakes{pdf: []byte("%PDF-1.7 twenty bytes"), onRender: func(context.Context) error { cancel(); return nil }}
	if _, err := New(nil).Run(ctx, stagesOf(gone), Job{Hosted: true}); err == nil {
		t.Fatal("a client gone before the answer got a result")
	}
	if got := gone.called(); got != "reserve parse style render store:Report - Q1.pdf delete:file1 refund:internal" {
		t.Errorf("client gone: calls %q", got)
	}

	refused := &fakes{pdf: []byte("%PDF-1.7 twenty bytes"), onCommit: func(context.Context) error { return stage.Errorf(stage.CodeUnavailable, "store down") }}
	if _, err := New(nil).Run(context.Background(), stagesOf(refused), Job{Hosted: true, IdempotencyKey: "k"}); err == nil {
		t.Fatal("a refused charge gave a result")
	}
	if got := refused.called(); got != "reserve parse style render store:Report - Q1.pdf commit delete:file1 refund:unavailable" {
		t.Errorf("charge refused: calls %q", got)
	}

	// Charged after the answer, and refused: the URL is out, the file stays.
	after := &fakes{pdf: []byte("%PDF-1.7 twenty bytes"), held: 10 * time.Minute, onCommit: func(context.Context) error { return stage.Errorf(stage.CodeUnavailable, "store down") }}
	p := New(nil)
	res, err := p.Finish(context.Background(), stagesOf(after), Job{Hosted: true}, p.Start(context.Background(), stagesOf(after), Job{Hosted: true}))
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Commit(); err == nil {
		t.Fatal("the refused charge was not reported")
	}
	if got := after.called(); strings.Contains(got, "delete") {
		t.Errorf("a delivered URL's file was deleted: calls %q", got)
	}
}

// A renderer's answer that is not a PDF fails the conversion and refunds
// it: the host adds nothing to the PDF, so it would go out as charged.
func TestRenderedNotAPDFRefunds(t *testing.T) {
	for name, pdf := range map[string][]byte{"empty": nil, "garbage": []byte("this is not a pdf")} {
		t.Run(name, func(t *testing.T) {
			f := &fakes{pdf: pdf}
			obs := &observations{}
			_, err := New(obs.observe).Run(context.Background(), stagesOf(f), Job{Hosted: true})
			if err == nil || stage.CodeOf(err) != stage.CodeInternal || !strings.Contains(err.Error(), "the renderer returned") {
				t.Fatalf("err = %v, want an internal error naming the renderer", err)
			}
			if got := f.called(); got != "reserve parse style render refund:internal" {
				t.Fatalf("calls = %q, want a refund and nothing stored", got)
			}
		})
	}
}

// A sink's answer that no client could download from fails the conversion,
// refunds it and deletes what was stored.
func TestStoredUnreachableRefunds(t *testing.T) {
	for name, answer := range map[string]*stage.StoreResponse{
		"id with slashes":  {ID: "usr_x/2026/11/abc"},
		"url not http":     {ID: "abc", URL: "javascript:alert(1)"},
		"url not absolute": {ID: "abc", URL: "/files/abc"},
	} {
		t.Run(name, func(t *testing.T) {
			f := &fakes{pdf: []byte("%PDF-1.7"), storeAnswer: answer}
			_, err := New(nil).Run(context.Background(), stagesOf(f), Job{Hosted: true})
			if err == nil || stage.CodeOf(err) != stage.CodeInternal || !strings.Contains(err.Error(), "the sink returned") {
				t.Fatalf("err = %v, want an internal error naming the sink", err)
			}
			if got, want := f.called(), "reserve parse style render store:Report - Q1.pdf delete:"+answer.ID+" refund:internal"; got != want {
				t.Fatalf("calls = %q, want %q", got, want)
			}
		})
	}
}
