package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// fakes records calls; function-field fakes for this unit test only (the
// end-to-end tests in host run the real plugins).
type fakes struct {
	calls      []string
	renderErr  error
	pdf        []byte
	replay     *stage.Replay
	committed  string
	stored     []byte
	lastRender *stage.RenderRequest
	lastParse  *stage.ParseRequest
	lastStyle  *stage.StyleRequest
}

func (f *fakes) Reserve(_ context.Context, r *stage.ReserveRequest) (*stage.ReserveResponse, error) {
	f.calls = append(f.calls, "reserve")
	return &stage.ReserveResponse{ReservationID: "r1", Replay: f.replay}, nil
}
func (f *fakes) Commit(_ context.Context, r *stage.CommitRequest) (*stage.CommitResponse, error) {
	f.calls = append(f.calls, "commit")
	f.committed = r.Result
	return &stage.CommitResponse{}, nil
}
func (f *fakes) Refund(ctx context.Context, r *stage.RefundRequest) (*stage.RefundResponse, error) {
	f.calls = append(f.calls, "refund:"+r.Reason)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return &stage.RefundResponse{}, nil
}
func (f *fakes) Account(context.Context, *stage.AccountRequest) (*stage.AccountResponse, error) {
	return nil, nil
}
func (f *fakes) Parse(_ context.Context, r *stage.ParseRequest) (*stage.ParseResponse, error) {
	f.calls = append(f.calls, "parse")
	f.lastParse = r
	return &stage.ParseResponse{Document: stage.Document{Title: "Report / Q1", Root: &stage.Node{Kind: stage.KindDocument}}}, nil
}
func (f *fakes) Style(_ context.Context, r *stage.StyleRequest) (*stage.StyleResponse, error) {
	f.calls = append(f.calls, "style")
	f.lastStyle = r
	return &stage.StyleResponse{HTML: "<html>"}, nil
}
func (f *fakes) Render(_ context.Context, r *stage.RenderRequest) (*stage.RenderResponse, error) {
	f.calls = append(f.calls, "render")
	f.lastRender = r
	if f.renderErr != nil {
		return nil, f.renderErr
	}
	return &stage.RenderResponse{PDF: f.pdf, Pages: 2}, nil
}
func (f *fakes) Store(_ context.Context, r *stage.StoreRequest) (*stage.StoreResponse, error) {
	f.calls = append(f.calls, "store:"+r.Filename)
	f.stored = r.PDF
	return &stage.StoreResponse{ID: "file1"}, nil
}
func (f *fakes) Open(context.Context, *stage.OpenRequest) (*stage.OpenResponse, error) {
	f.calls = append(f.calls, "open")
	return &stage.OpenResponse{Body: io.NopCloser(bytes.NewReader(f.stored))}, nil
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
			var observed []string
			p := New(func(name string, _ time.Duration, err error) { observed = append(observed, name) })
			res, err := p.Run(context.Background(), stagesOf(f), tt.job)
			if got := strings.Join(f.calls, " "); got != tt.wantCalls {
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
			if err != nil || res.Pages != 2 || len(observed) != len(f.calls) {
				t.Fatalf("res=%+v err=%v observed=%v", res, err, observed)
			}
		})
	}
}

func TestRefundSurvivesCanceledRequest(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakes{renderErr: stage.Errorf(stage.CodeInternal, "x")}
	f.pdf = nil
	cancel()
	_, _ = New(nil).Run(ctx, stagesOf(f), Job{})
	last := f.calls[len(f.calls)-1]
	if !strings.HasPrefix(last, "refund") {
		t.Fatalf("no refund: %v", f.calls)
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
	if got := strings.Join(f.calls, " "); got != "reserve open" {
		t.Fatalf("replay calls = %q", got)
	}
}

func TestFilename(t *testing.T) {
	for in, want := range map[string]string{"": "document.pdf", "Hi": "Hi.pdf", "../etc/passwd": "etc-passwd.pdf", `a"b`: "a-b.pdf"} {
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
		f := &fakes{pdf: []byte("%PDF")}
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
