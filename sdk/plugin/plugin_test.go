package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/mdpress/mdpress/sdk/stage"
)

// fakeStages implements every stage with canned answers; the tests check
// what crosses the wire, not what a real stage does.
type fakeStages struct {
	pdf      []byte
	err      error
	stored   []byte
	openData []byte
	openBody func(data []byte) io.Reader // nil: the data whole
}

func (f *fakeStages) Configure(_ context.Context, req *stage.ConfigureRequest) (*stage.ConfigureResponse, error) {
	if string(req.Config) == `{"bad":1}` {
		return nil, stage.Errorf(stage.CodeInvalid, "unknown key %q", "bad")
	}
	return &stage.ConfigureResponse{Info: stage.Info{Name: "fake", Version: "1", Capabilities: []string{req.DataDir, req.Plans[0].Name}}}, nil
}
func (f *fakeStages) Health(context.Context) error { return f.err }
func (f *fakeStages) Close() error                 { return nil }
func (f *fakeStages) Authenticate(_ context.Context, req *stage.AuthenticateRequest) (*stage.AuthenticateResponse, error) {
	if req.Token != "good" {
		return nil, stage.Errorf(stage.CodeUnauthenticated, "bad key")
	}
	return &stage.AuthenticateResponse{Principal: stage.Principal{UserID: "u1", KeyID: "k1", Plan: stage.Plan{Name: "pro", MonthlyCredits: 5000, RetentionDays: 30}}}, nil
}
func (f *fakeStages) Parse(_ context.Context, req *stage.ParseRequest) (*stage.ParseResponse, error) {
	root := &stage.Node{Kind: stage.KindDocument, Children: []*stage.Node{{Kind: stage.KindHeading, Attrs: map[string]string{"level": "1"}, Children: []*stage.Node{{Kind: stage.KindText, Text: req.Markdown}}}}}
	return &stage.ParseResponse{Document: stage.Document{HTML: "<h1>" + req.Markdown + "</h1>", Root: root, Title: req.Markdown, Outline: []stage.Heading{{Level: 1, Text: req.Markdown, ID: "x"}}}}, nil
}
func (f *fakeStages) Render(ctx context.Context, req *stage.RenderRequest) (*stage.RenderResponse, error) {
	if f.err != nil {
		return nil, f.err
	}
	if req.Page.Name != "A4" || req.Tokens.Margins[3] != 40 || req.Document.Root.Children[0].Attr("level") != "1" {
		return nil, stage.Errorf(stage.CodeInvalid, "request did not cross intact: %+v", req.Page)
	}
	return &stage.RenderResponse{PDF: f.pdf, Pages: 7}, nil
}
func (f *fakeStages) Store(_ context.Context, req *stage.StoreRequest) (*stage.StoreResponse, error) {
	f.stored = req.PDF
	return &stage.StoreResponse{ID: req.Owner + "-" + req.Filename, ExpiresAt: time.Unix(1700000000, 0).Add(req.TTL)}, nil
}
func (f *fakeStages) Open(_ context.Context, req *stage.OpenRequest) (*stage.OpenResponse, error) {
	if req.ID != "f1" {
		return nil, stage.Errorf(stage.CodeNotFound, "no such file")
	}
	data := f.openData[req.Offset:]
	if req.Length >= 0 {
		data = data[:req.Length]
	}
	var body io.Reader = bytes.NewReader(data)
	if f.openBody != nil {
		body = f.openBody(data)
	}
	return &stage.OpenResponse{Size: int64(len(f.openData)), Filename: "a.pdf", ETag: `"e"`, Body: io.NopCloser(body)}, nil
}

func connect(t *testing.T, stageName string, impl stage.Plugin) *Client {
	t.Helper()
	client, server := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{stageName: &grpcPlugin{stage: stageName, impl: impl}})
	// Stop the server first: client.Close would also stop it through
	// go-plugin's controller, and two Stops race inside go-plugin.
	t.Cleanup(func() { server.Stop(); client.Close() })
	raw, err := client.Dispense(stageName)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*Client)
}

func TestRenderCarriesLargePDFInChunks(t *testing.T) {
	pdf := bytes.Repeat([]byte("0123456789abcdef"), 50<<20/16+3) // just over 50 MiB
	c := connect(t, stage.NameRender, &fakeStages{pdf: pdf})
	resp, err := c.Render(context.Background(), &stage.RenderRequest{
		Page:     stage.PageSize{Name: "A4", WidthPt: 595.28, HeightPt: 841.89},
		Tokens:   stage.Tokens{Margins: [4]float64{10, 20, 30, 40}},
		Document: stage.Document{Root: &stage.Node{Kind: stage.KindDocument, Children: []*stage.Node{{Kind: stage.KindHeading, Attrs: map[string]string{"level": "1"}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp.PDF, pdf) || resp.Pages != 7 {
		t.Fatalf("got %d bytes, %d pages; want %d bytes, 7 pages", len(resp.PDF), resp.Pages, len(pdf))
	}
}

// TestRenderOneChunkPDFNotCopied: a PDF that crosses in one chunk, as
// nearly every one does, reaches the caller in the buffer its message was
// unmarshalled into. Copied again, it made the host allocate a second PDF
// per conversion, and collect garbage the more often for it.
func TestRenderOneChunkPDFNotCopied(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not measured under the race detector (see raceEnabled)")
	}
	pdf := bytes.Repeat([]byte("0123456789abcdef"), 512<<10/16) // 512 KiB, one chunk
	c := connect(t, stage.NameRender, &fakeStages{pdf: pdf})
	req := &stage.RenderRequest{
		Page:     stage.PageSize{Name: "A4", WidthPt: 595.28, HeightPt: 841.89},
		Tokens:   stage.Tokens{Margins: [4]float64{10, 20, 30, 40}},
		Document: stage.Document{Root: &stage.Node{Kind: stage.KindDocument, Children: []*stage.Node{{Kind: stage.KindHeading, Attrs: map[string]string{"level": "1"}}}}},
	}
	render := func() {
		resp, err := c.Render(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(resp.PDF, pdf) {
			t.Fatalf("got %d bytes, want the %d of the PDF", len(resp.PDF), len(pdf))
		}
	}
	// gRPC's buffer pools fill on the first calls; the least of a few
	// measures leaves out what another goroutine allocated meanwhile.
	render()
	render()
	least := uint64(math.MaxUint64)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		render()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	// Both ends are in this process, the plugin's message marshalled into
	// gRPC's pooled buffers: the caller's unmarshalled chunk is the one
	// PDF-sized allocation.
	if limit := uint64(len(pdf)) * 3 / 2; least > limit {
		t.Fatalf("a render of a %d KiB PDF allocated %d KiB; want at most %d KiB (the chunk as unmarshalled, and little else)",
			len(pdf)>>10, least>>10, limit>>10)
	}
}

func TestErrorsKeepCodeAndSafeMessage(t *testing.T) {
	internal := errors.New("open /var/lib/secret/path: permission denied")
	tests := []struct {
		name     string
		err      error
		wantCode stage.Code
		wantMsg  string
	}{
		{"typed", &stage.Error{Code: stage.CodeTooLarge, Message: "too big", Details: map[string]string{"size": "9 MB"}}, stage.CodeTooLarge, "too big"},
		{"busy", stage.Errorf(stage.CodeBusy, "queue full"), stage.CodeBusy, "queue full"},
		{"internal hidden", internal, stage.CodeInternal, "internal error"},
		{"wrapped internal hidden", stage.Wrap(stage.CodeInternal, internal, "/var/lib leak"), stage.CodeInternal, "internal error"},
		{"deadline", context.DeadlineExceeded, stage.CodeTimeout, "the stage ran past its deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := connect(t, stage.NameRender, &fakeStages{err: tt.err})
			_, err := c.Render(context.Background(), &stage.RenderRequest{})
			if got := stage.CodeOf(err); got != tt.wantCode {
				t.Fatalf("code = %v, want %v (%v)", got, tt.wantCode, err)
			}
			if got := stage.SafeMessage(err); got != tt.wantMsg {
				t.Fatalf("message = %q, want %q", got, tt.wantMsg)
			}
			if n := strings.Count(err.Error(), tt.wantMsg); n != 1 {
				t.Fatalf("error %q says its message %d times", err, n)
			}
			if strings.Contains(stage.SafeMessage(err), "/var/lib") {
				t.Fatal("internal path crossed the wire")
			}
			var se *stage.Error
			if tt.wantCode == stage.CodeTooLarge && (!errors.As(err, &se) || se.Details["size"] != "9 MB") {
				t.Fatalf("details lost: %+v", se)
			}
		})
	}
}

func TestConfigureAuthParse(t *testing.T) {
	f := &fakeStages{}
	c := connect(t, stage.NameAuth, f)
	resp, err := c.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte(`{}`), DataDir: "/d", Plans: []stage.Plan{{Name: "free"}}})
	if err != nil || resp.Info.Name != "fake" || resp.Info.Capabilities[0] != "/d" || resp.Info.Capabilities[1] != "free" {
		t.Fatalf("configure = %+v, %v", resp, err)
	}
	if _, err := c.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte(`{"bad":1}`), Plans: []stage.Plan{{}}}); stage.CodeOf(err) != stage.CodeInvalid || err.Error() != `unknown key "bad"` {
		t.Fatalf("bad config: %v", err)
	}
	p, err := c.Authenticate(context.Background(), &stage.AuthenticateRequest{Token: "good"})
	if err != nil || p.Principal.UserID != "u1" || p.Principal.Plan.RetentionDays != 30 {
		t.Fatalf("auth = %+v, %v", p, err)
	}
	if _, err := c.Authenticate(context.Background(), &stage.AuthenticateRequest{Token: "bad"}); stage.CodeOf(err) != stage.CodeUnauthenticated {
		t.Fatalf("bad token: %v", err)
	}
	pc := connect(t, stage.NameParse, f)
	doc, err := pc.Parse(context.Background(), &stage.ParseRequest{Markdown: "Hi"})
	if err != nil || doc.Document.Title != "Hi" || doc.Document.Root.PlainText() != "Hi" || doc.Document.Outline[0].ID != "x" {
		t.Fatalf("parse = %+v, %v", doc, err)
	}
}

func TestSinkStoreAndStreamedOpen(t *testing.T) {
	data := bytes.Repeat([]byte{1, 2, 3, 4, 5}, 700_000) // 3.5 MB, several chunks
	f := &fakeStages{openData: data}
	c := connect(t, stage.NameSink, f)
	st, err := c.Store(context.Background(), &stage.StoreRequest{Owner: "u", Filename: "a.pdf", PDF: data, TTL: time.Hour})
	if err != nil || st.ID != "u-a.pdf" || !bytes.Equal(f.stored, data) || st.ExpiresAt.Unix() != 1700003600 {
		t.Fatalf("store = %+v, %v, stored %d bytes", st, err, len(f.stored))
	}
	for _, r := range []struct{ off, n int64 }{{0, -1}, {10, 100}, {int64(len(data)) - 5, -1}} {
		o, err := c.Open(context.Background(), &stage.OpenRequest{ID: "f1", Offset: r.off, Length: r.n})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(o.Body)
		o.Body.Close()
		want := data[r.off:]
		if r.n >= 0 {
			want = want[:r.n]
		}
		if err != nil || !bytes.Equal(got, want) || o.Size != int64(len(data)) || o.ETag != `"e"` {
			t.Fatalf("open %v: %d bytes, err %v", r, len(got), err)
		}
	}
	if _, err := c.Open(context.Background(), &stage.OpenRequest{ID: "nope"}); stage.CodeOf(err) != stage.CodeNotFound {
		t.Fatalf("unknown id: %v", err)
	}
}

// A sink's body that ends short of the size it announced, as an S3 read
// whose connection dropped does, is an error at the host, never a clean
// end: a replay would pass the part for the whole PDF.
func TestSinkOpenCutShortIsAnError(t *testing.T) {
	data := bytes.Repeat([]byte{1, 2, 3, 4, 5}, 700_000) // several chunks
	for name, body := range map[string]func([]byte) io.Reader{
		"unexpected EOF": func(d []byte) io.Reader {
			return io.MultiReader(bytes.NewReader(d[:len(d)/3]), iotest.ErrReader(io.ErrUnexpectedEOF))
		},
		"early EOF": func(d []byte) io.Reader { return bytes.NewReader(d[:len(d)-7]) },
	} {
		t.Run(name, func(t *testing.T) {
			c := connect(t, stage.NameSink, &fakeStages{openData: data, openBody: body})
			o, err := c.Open(context.Background(), &stage.OpenRequest{ID: "f1", Length: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer o.Body.Close()
			got, err := io.ReadAll(o.Body)
			if err == nil {
				t.Fatalf("read %d of %d bytes with no error", len(got), len(data))
			}
		})
	}
}

func TestCheckImpl(t *testing.T) {
	if err := checkImpl(stage.NameSink, &authOnly{}); err == nil {
		t.Fatal("an auth plugin must not serve the sink stage")
	}
	if err := checkImpl("bogus", &fakeStages{}); err == nil {
		t.Fatal("unknown stage accepted")
	}
}

type authOnly struct{}

func (authOnly) Configure(context.Context, *stage.ConfigureRequest) (*stage.ConfigureResponse, error) {
	return &stage.ConfigureResponse{}, nil
}
func (authOnly) Health(context.Context) error { return nil }
func (authOnly) Close() error                 { return nil }

// heldMeter answers Reserve with a hold time, the one meter call whose
// answer decides when the host commits.
type heldMeter struct{ fakeStages }

func (heldMeter) Reserve(context.Context, *stage.ReserveRequest) (*stage.ReserveResponse, error) {
	return &stage.ReserveResponse{ReservationID: "r1", Held: 90 * time.Second}, nil
}
func (heldMeter) Commit(context.Context, *stage.CommitRequest) (*stage.CommitResponse, error) {
	return &stage.CommitResponse{}, nil
}
func (heldMeter) Refund(context.Context, *stage.RefundRequest) (*stage.RefundResponse, error) {
	return &stage.RefundResponse{}, nil
}
func (heldMeter) Account(context.Context, *stage.AccountRequest) (*stage.AccountResponse, error) {
	return &stage.AccountResponse{}, nil
}

func TestReserveCarriesHoldTime(t *testing.T) {
	c := connect(t, stage.NameMeter, &heldMeter{})
	r, err := c.Reserve(context.Background(), &stage.ReserveRequest{UserID: "u1", Credits: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.ReservationID != "r1" || r.Held != 90*time.Second {
		t.Fatalf("reserve = %+v, want r1 held 1m30s", r)
	}
}

// deletingSink is a sink that deletes, recording what.
type deletingSink struct {
	*fakeStages
	deleted []string
}

func (d *deletingSink) Delete(_ context.Context, req *stage.DeleteRequest) error {
	if req.ID == "locked" {
		return stage.Errorf(stage.CodeUnavailable, "volume read-only")
	}
	d.deleted = append(d.deleted, req.ID)
	return nil
}

// TestSinkDelete: Delete reaches a sink that deletes, with its errors; a
// sink that does not answers errors.ErrUnsupported, which the host reads
// as "leave the file to expire".
func TestSinkDelete(t *testing.T) {
	d := &deletingSink{fakeStages: &fakeStages{}}
	c := connect(t, stage.NameSink, d)
	if err := c.Delete(context.Background(), &stage.DeleteRequest{ID: "f1"}); err != nil || !slices.Equal(d.deleted, []string{"f1"}) {
		t.Fatalf("Delete: %v, deleted %v", err, d.deleted)
	}
	if err := c.Delete(context.Background(), &stage.DeleteRequest{ID: "locked"}); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("a failed Delete: %v, want the sink's CodeUnavailable", err)
	}
	plain := connect(t, stage.NameSink, &fakeStages{})
	if err := plain.Delete(context.Background(), &stage.DeleteRequest{ID: "f1"}); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Delete on a sink without it: %v, want errors.ErrUnsupported", err)
	}
}

// TestClosedConnectionIsUnavailable: a call on a connection the host has
// closed (a plugin being relaunched) fails as the stage being
// unavailable, not as a cancellation, which the host answers as an
// internal error.
func TestClosedConnectionIsUnavailable(t *testing.T) {
	client, server := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{stage.NameMeter: &grpcPlugin{stage: stage.NameMeter, impl: &heldMeter{}}})
	raw, err := client.Dispense(stage.NameMeter)
	if err != nil {
		t.Fatal(err)
	}
	c := raw.(*Client)
	server.Stop()
	_ = client.Conn.Close()
	_, err = c.Commit(context.Background(), &stage.CommitRequest{ReservationID: "r1"})
	if code := stage.CodeOf(err); code != stage.CodeUnavailable || errors.Is(err, context.Canceled) {
		t.Fatalf("call on a closed connection: %v (code %v), want unavailable and no cancellation", err, code)
	}
}

// labelPerDocument writes a family with a series per document, as a plugin
// that labels by document would, ignoring write errors as fmt.Fprintf's
// callers do; written counts the bytes its writer took.
type labelPerDocument struct {
	fakeStages
	series  int
	written int
}

func (l *labelPerDocument) WriteMetrics(w io.Writer) error {
	fmt.Fprint(w, "# TYPE per_doc gauge\n")
	for i := range l.series {
		n, _ := fmt.Fprintf(w, "per_doc{doc=\"%040d\"} 1\n", i)
		l.written += n
	}
	return nil
}

// TestMetricsCappedInThePlugin: an answer over MaxMetricsBytes is cut off
// where it is written, in the plugin, and the host's client reports
// ErrMetricsTooLarge; one within the bound crosses whole.
func TestMetricsCappedInThePlugin(t *testing.T) {
	huge := &labelPerDocument{series: 1_000_000}
	client := connect(t, stage.NameRender, huge)
	if _, err := client.Metrics(context.Background()); !errors.Is(err, ErrMetricsTooLarge) {
		t.Fatalf("a million series: %v, want ErrMetricsTooLarge", err)
	}
	if huge.written > MaxMetricsBytes {
		t.Fatalf("the plugin's writer took %d bytes, past the %d the host accepts", huge.written, MaxMetricsBytes)
	}

	fits := &labelPerDocument{series: maxMetricsText / 60}
	client = connect(t, stage.NameRender, fits)
	text, err := client.Metrics(context.Background())
	if err != nil {
		t.Fatalf("%d series: %v", fits.series, err)
	}
	if len(text) != fits.written+len("# TYPE per_doc gauge\n") || !bytes.HasSuffix(text, []byte(fmt.Sprintf("per_doc{doc=\"%040d\"} 1\n", fits.series-1))) {
		t.Fatalf("got %d bytes of metrics, want %d ending with the last series", len(text), fits.written+21)
	}
}
