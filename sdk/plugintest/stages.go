package plugintest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"
)

// SampleDocument is a small parsed document for style and render tests.
func SampleDocument() stage.Document {
	text := func(s string) *stage.Node { return &stage.Node{Kind: stage.KindText, Text: s} }
	root := &stage.Node{Kind: stage.KindDocument, Children: []*stage.Node{
		{Kind: stage.KindHeading, Attrs: map[string]string{"level": "1", "id": "conformance"}, Children: []*stage.Node{text("Conformance")}},
		{Kind: stage.KindParagraph, Children: []*stage.Node{text("Plain "), {Kind: stage.KindStrong, Children: []*stage.Node{text("bold")}}, text(" text.")}},
	}}
	return stage.Document{
		HTML:    `<h1 id="conformance">Conformance</h1><p>Plain <strong>bold</strong> text.</p>`,
		Root:    root,
		Title:   "Conformance",
		Outline: []stage.Heading{{Level: 1, Text: "Conformance", ID: "conformance"}},
	}
}

// A4 is the default page.
var A4 = stage.PageSize{Name: "A4", WidthPt: 595.28, HeightPt: 841.89}

// Parser checks a parse plugin.
func Parser(t *testing.T, p stage.Parser, cfg Config) {
	t.Helper()
	if !cfg.Configured {
		configure(t, p.(stage.Plugin), cfg)
	}
	resp, err := p.Parse(ctxT(t), &stage.ParseRequest{Markdown: "# Title *here*\n\nSome **bold** text.\n\n## Second\n"})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	d := resp.Document
	if d.Root == nil || d.Root.Kind != stage.KindDocument {
		t.Fatalf("root must be a %s node, got %+v", stage.KindDocument, d.Root)
	}
	if d.Title != "Title here" {
		t.Errorf("Title = %q, want %q (plain text of the first heading)", d.Title, "Title here")
	}
	if len(d.Outline) != 2 || d.Outline[0].Level != 1 || d.Outline[1].Level != 2 || d.Outline[1].Text != "Second" {
		t.Errorf("Outline = %+v, want the two headings", d.Outline)
	}
	if !strings.Contains(d.HTML, "<h1") || !strings.Contains(d.HTML, "<strong>bold</strong>") {
		t.Errorf("HTML lacks the heading or the bold text: %q", d.HTML)
	}
	if got := strings.Join(strings.Fields(d.Root.PlainText()), " "); got != "Title here Some bold text. Second" {
		t.Errorf("tree text = %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Parse(ctx, &stage.ParseRequest{Markdown: "# x"}); err == nil {
		t.Error("Parse with a canceled context must fail")
	}
	if pp, ok := p.(stage.PartParser); ok {
		partParser(t, p, pp)
	}
}

// partsSample has blocks of most kinds, each after a blank line, where a
// parser may cut it into parts.
const partsSample = "# Title\n\nA paragraph with *emphasis*.\n\n- one\n- two\n\n## Second\n\n" +
	"```go\ncode\n\n# not a heading\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted\n\n## Second\n\nThe end.\n"

// partParser checks that a PartParser's parts join into Parse's tree, with
// the same title and outline.
func partParser(t *testing.T, p stage.Parser, pp stage.PartParser) {
	t.Helper()
	req := &stage.ParseRequest{Markdown: partsSample, SkipHTML: true}
	whole, err := p.Parse(ctxT(t), req)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	joined := &stage.Node{Kind: stage.KindDocument}
	rest, err := pp.ParseParts(ctxT(t), req, func(part stage.Part) error {
		if part.Root == nil || part.Root.Kind != stage.KindDocument {
			t.Errorf("a part must be a %s node, got %+v", stage.KindDocument, part.Root)
			return nil
		}
		joined.Children = append(joined.Children, part.Root.Children...)
		return nil
	})
	if err != nil {
		t.Fatalf("ParseParts: %v", err)
	}
	if !reflect.DeepEqual(joined.Children, whole.Document.Root.Children) {
		t.Errorf("the parts joined are not Parse's tree:\n%s\nwant\n%s", joined.PlainText(), whole.Document.Root.PlainText())
	}
	if rest.Document.Root != nil || rest.Document.Title != whole.Document.Title || !reflect.DeepEqual(rest.Document.Outline, whole.Document.Outline) {
		t.Errorf("the rest of the document = %+v, want Parse's title and outline and no tree", rest.Document)
	}
	stop := errors.New("stop")
	if _, err := pp.ParseParts(ctxT(t), req, func(stage.Part) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("ParseParts must stop and return emit's error, got %v", err)
	}
}

// Styler checks a style plugin for both built-in themes.
func Styler(t *testing.T, s stage.Styler, cfg Config) {
	t.Helper()
	if !cfg.Configured {
		configure(t, s.(stage.Plugin), cfg)
	}
	var htmls []string
	for _, theme := range []string{"basic", "modern"} {
		resp, err := s.Style(ctxT(t), &stage.StyleRequest{Document: SampleDocument(), Theme: theme, Page: A4, Numbering: stage.NumberingCenter})
		if err != nil {
			t.Fatalf("Style(%s): %v", theme, err)
		}
		if !strings.Contains(resp.HTML, "Conformance") || !strings.Contains(strings.ToLower(resp.HTML), "<html") {
			t.Errorf("Style(%s) is not a full document with the content", theme)
		}
		if resp.Tokens.FontSize <= 0 || resp.Tokens.TextColor == "" {
			t.Errorf("Style(%s) tokens incomplete: %+v", theme, resp.Tokens)
		}
		htmls = append(htmls, resp.HTML)
	}
	if htmls[0] == htmls[1] {
		t.Error("the basic and modern themes produce the same document")
	}
	_, err := s.Style(ctxT(t), &stage.StyleRequest{Document: SampleDocument(), Theme: "no-such-theme", Page: A4})
	if stage.CodeOf(err) != stage.CodeInvalid {
		t.Errorf("unknown theme: %v, want CodeInvalid", err)
	}
}

// Renderer checks a render plugin: a PDF with a page count, and the deadline
// respected.
func Renderer(t *testing.T, r stage.Renderer, cfg Config, html string) {
	t.Helper()
	if !cfg.Configured {
		configure(t, r.(stage.Plugin), cfg)
	}
	if html == "" {
		html = "<!doctype html><html><head><meta charset=utf-8><title>Conformance</title></head><body>" + SampleDocument().HTML + "</body></html>"
	}
	req := &stage.RenderRequest{HTML: html, Document: SampleDocument(), Page: A4, Numbering: stage.NumberingCenter,
		Tokens: stage.Tokens{BodyFont: "sans", HeadingFont: "sans", MonoFont: "mono", FontSize: 11, LineHeight: 1.4,
			HeadingSizes: [6]float64{24, 20, 16, 14, 12, 11}, TextColor: "#111111", HeadingColor: "#111111",
			LinkColor: "#0000ee", MutedColor: "#555555", RuleColor: "#cccccc", CodeBackground: "#f4f4f4",
			CodeColor: "#111111", QuoteBar: "#cccccc", TableHeaderFill: "#eeeeee", AccentColor: "#0000ee",
			Margins: [4]float64{56, 56, 56, 56}, ParagraphSpacing: 8}}
	resp, err := r.Render(ctxT(t), req)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if !bytes.HasPrefix(resp.PDF, []byte("%PDF-")) || !bytes.Contains(resp.PDF[max(0, len(resp.PDF)-2048):], []byte("%%EOF")) {
		t.Fatalf("Render did not return a complete PDF (%d bytes)", len(resp.PDF))
	}
	if resp.Pages != 1 {
		t.Errorf("Pages = %d, want 1", resp.Pages)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	time.Sleep(time.Millisecond)
	if _, err := r.Render(ctx, req); err == nil {
		t.Error("Render past its deadline must fail")
	} else if c := stage.CodeOf(err); c != stage.CodeTimeout && c != stage.CodeInternal {
		t.Errorf("Render past its deadline: code %v, want timeout", c)
	}
	// A client serves RenderParts for any plugin built with this SDK, but
	// the host calls it only on those that declare reads-tree-parts; an
	// implementation in process says so by implementing it.
	if pr, ok := r.(stage.PartRenderer); ok {
		if _, client := r.(*sdkplugin.Client); !client {
			partRenderer(t, pr, req)
		}
	}
}

// partRenderer checks a PartRenderer: the sample document a block a part,
// and parts that fail.
func partRenderer(t *testing.T, r stage.PartRenderer, req *stage.RenderRequest) {
	t.Helper()
	head := *req
	head.Document = stage.Document{}
	var blocks []*stage.Node
	for _, b := range req.Document.Root.Children {
		blocks = append(blocks, &stage.Node{Kind: stage.KindDocument, Children: []*stage.Node{b}})
	}
	resp, err := r.RenderParts(ctxT(t), &head, &blockParts{parts: blocks, rest: req.Document})
	if err != nil {
		t.Fatalf("RenderParts: %v", err)
	}
	if !bytes.HasPrefix(resp.PDF, []byte("%PDF-")) || resp.Pages != 1 {
		t.Errorf("RenderParts did not return the one-page PDF (%d bytes, %d pages)", len(resp.PDF), resp.Pages)
	}
	failed := errors.New("the parse failed")
	if _, err := r.RenderParts(ctxT(t), &head, &blockParts{parts: blocks[:1], err: failed}); err == nil {
		t.Error("RenderParts must fail when its parts do")
	}
}

// blockParts hands over parts from a slice, then ends with err or io.EOF.
type blockParts struct {
	parts []*stage.Node
	rest  stage.Document
	err   error
}

func (b *blockParts) Next(ctx context.Context) (stage.Part, error) {
	if err := ctx.Err(); err != nil {
		return stage.Part{}, err
	}
	if len(b.parts) == 0 {
		if b.err != nil {
			return stage.Part{}, b.err
		}
		return stage.Part{}, io.EOF
	}
	p := b.parts[0]
	b.parts = b.parts[1:]
	return stage.Part{Root: p}, nil
}

func (b *blockParts) Rest() stage.Document { return b.rest }

// Sink checks a sink plugin: store, open whole and by range, unknown ids.
func Sink(t *testing.T, s stage.Sink, cfg Config) {
	t.Helper()
	if !cfg.Configured {
		configure(t, s.(stage.Plugin), cfg)
	}
	pdf := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("conformance "), 200_000)...)
	st, err := s.Store(ctxT(t), &stage.StoreRequest{Owner: "usr_conformance", Filename: "Conformance.pdf", PDF: pdf, TTL: 7 * 24 * time.Hour})
	if err != nil {
		t.Fatalf("Store: %v", err)
	}
	if !stage.ValidFileID(st.ID) {
		t.Errorf("id %q is not one URL path segment (letters, digits, . _ ~ - only): the host could not serve it at /v1/files/{id}", st.ID)
	}
	if u, err := url.Parse(st.URL); st.URL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		t.Errorf("URL %q is not an absolute http or https URL", st.URL)
	}
	if len(st.ID) < 22 {
		t.Errorf("id %q is too short to be unguessable (want >= 128 random bits)", st.ID)
	}
	if d := time.Until(st.ExpiresAt); d < 7*24*time.Hour-time.Minute || d > 7*24*time.Hour+time.Minute {
		t.Errorf("ExpiresAt %v is not 7 days out", st.ExpiresAt)
	}
	for _, r := range []struct{ off, n int64 }{{0, -1}, {5, 100}, {int64(len(pdf)) - 10, 10}} {
		o, err := s.Open(ctxT(t), &stage.OpenRequest{ID: st.ID, Offset: r.off, Length: r.n})
		if err != nil {
			t.Fatalf("Open %v: %v", r, err)
		}
		got, err := io.ReadAll(o.Body)
		o.Body.Close()
		want := pdf[r.off:]
		if r.n >= 0 {
			want = want[:r.n]
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Open %v: got %d bytes (err %v), want %d", r, len(got), err, len(want))
		}
		if o.Size != int64(len(pdf)) || o.Filename != "Conformance.pdf" || o.ETag == "" {
			t.Errorf("Open %v metadata: size %d, filename %q, etag %q", r, o.Size, o.Filename, o.ETag)
		}
	}
	for _, id := range []string{"0123456789abcdef0123456789abcdef", "../../etc/passwd", "", "%2e%2e%2f"} {
		if _, err := s.Open(ctxT(t), &stage.OpenRequest{ID: id, Length: -1}); stage.CodeOf(err) != stage.CodeNotFound {
			t.Errorf("Open(%q): %v, want CodeNotFound", id, err)
		}
	}
	deleter(t, s, st.ID)
}

// deleter checks a sink's Delete, when it has one: the file is gone for
// good, and deleting it again, or a file never stored, succeeds.
func deleter(t *testing.T, s stage.Sink, id string) {
	t.Helper()
	d, ok := s.(stage.Deleter)
	if !ok {
		return
	}
	err := d.Delete(ctxT(t), &stage.DeleteRequest{ID: id})
	if errors.Is(err, errors.ErrUnsupported) {
		return // a plugin whose sink does not delete
	}
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Open(ctxT(t), &stage.OpenRequest{ID: id, Length: -1}); stage.CodeOf(err) != stage.CodeNotFound {
		t.Errorf("Open after Delete: %v, want CodeNotFound", err)
	}
	for _, again := range []string{id, "0123456789abcdef0123456789abcdef"} {
		if err := d.Delete(ctxT(t), &stage.DeleteRequest{ID: again}); err != nil {
			t.Errorf("Delete(%q) of a file that is not there: %v", again, err)
		}
	}
}

// Authenticator checks an auth plugin with a valid token it should accept.
func Authenticator(t *testing.T, a stage.Authenticator, cfg Config, validToken string) {
	t.Helper()
	if !cfg.Configured {
		configure(t, a.(stage.Plugin), cfg)
	}
	resp, err := a.Authenticate(ctxT(t), &stage.AuthenticateRequest{Token: validToken})
	if err != nil || resp.Principal.UserID == "" || resp.Principal.Plan.Name == "" {
		t.Fatalf("Authenticate(valid) = %+v, %v", resp, err)
	}
	for _, bad := range []string{"", "x", validToken + "x", strings.ToUpper(validToken)} {
		if _, err := a.Authenticate(ctxT(t), &stage.AuthenticateRequest{Token: bad}); stage.CodeOf(err) != stage.CodeUnauthenticated {
			t.Errorf("Authenticate(%.8q...) = %v, want CodeUnauthenticated", bad, err)
		}
	}
}

// Meter checks a meter plugin on an account holding exactly credits.
func Meter(t *testing.T, m stage.Meter, cfg Config, userID string, credits int64) {
	t.Helper()
	if !cfg.Configured {
		configure(t, m.(stage.Plugin), cfg)
	}
	acct, err := m.Account(ctxT(t), &stage.AccountRequest{UserID: userID})
	if err != nil || acct.CurrentCredits != credits || acct.LastReset.IsZero() {
		t.Fatalf("Account = %+v, %v; want %d credits", acct, err, credits)
	}
	var ids []string
	for range credits {
		r, err := m.Reserve(ctxT(t), &stage.ReserveRequest{UserID: userID, Credits: 1})
		if err != nil {
			t.Fatalf("Reserve: %v", err)
		}
		ids = append(ids, r.ReservationID)
	}
	if _, err := m.Reserve(ctxT(t), &stage.ReserveRequest{UserID: userID, Credits: 1}); stage.CodeOf(err) != stage.CodeForbidden {
		t.Fatalf("Reserve beyond the balance: %v, want CodeForbidden", err)
	}
	if _, err := m.Refund(ctxT(t), &stage.RefundRequest{ReservationID: ids[0], Reason: "conformance"}); err != nil {
		t.Fatalf("Refund: %v", err)
	}
	if _, err := m.Refund(ctxT(t), &stage.RefundRequest{ReservationID: ids[0], Reason: "again"}); err != nil {
		t.Fatalf("second Refund must be a no-op: %v", err)
	}
	for _, id := range ids[1:] {
		if _, err := m.Commit(ctxT(t), &stage.CommitRequest{ReservationID: id}); err != nil {
			t.Fatalf("Commit: %v", err)
		}
	}
	// The host commits again when it could not see a commit's outcome (see
	// stage.CommitRequest): the second must succeed and charge nothing.
	if _, err := m.Commit(ctxT(t), &stage.CommitRequest{ReservationID: ids[len(ids)-1]}); err != nil {
		t.Fatalf("second Commit of a committed reservation must succeed: %v", err)
	}
	acct, err = m.Account(ctxT(t), &stage.AccountRequest{UserID: userID})
	if err != nil || acct.CurrentCredits != 1 {
		t.Fatalf("after one refund and a commit sent twice: %+v, %v; want 1 credit (a second commit must charge nothing)", acct, err)
	}
}
