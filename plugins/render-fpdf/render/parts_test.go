package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

// listParts hands out a tree's parts as the host relays a parse's.
type listParts struct {
	parts []stage.Part
	rest  stage.Document
	// err, when set, is what Next returns after the parts instead of io.EOF.
	err error
	// hang makes Next wait for its context after the parts, as it does for
	// a parse that has not sent its next part yet.
	hang bool
	// onNext is called at the start of each Next with its count.
	onNext func(n int)
	// calls counts Next; atomic because the plugin client calls Next from a
	// goroutine of its own.
	calls atomic.Int32
}

func (p *listParts) Next(ctx context.Context) (stage.Part, error) {
	n := int(p.calls.Add(1))
	if p.onNext != nil {
		p.onNext(n)
	}
	if n <= len(p.parts) {
		return p.parts[n-1], nil
	}
	switch {
	case p.err != nil:
		return stage.Part{}, p.err
	case p.hang:
		<-ctx.Done()
		return stage.Part{}, ctx.Err()
	}
	return stage.Part{}, io.EOF
}

func (p *listParts) Rest() stage.Document { return p.rest }

// partsOf makes the parts of a split of d's top-level blocks; the rest of
// the document is d's title, as a parse sends it after the tree.
func partsOf(d stage.Document, split [][]*stage.Node) *listParts {
	p := &listParts{rest: stage.Document{Title: d.Title, Outline: d.Outline}}
	for _, blocks := range split {
		p.parts = append(p.parts, stage.Part{Root: &stage.Node{Kind: stage.KindDocument, Children: blocks}})
	}
	return p
}

// splits cuts a document's top-level blocks in the ways a parse might,
// by name.
func splits(ns []*stage.Node, seed uint64) map[string][][]*stage.Node {
	out := map[string][][]*stage.Node{"one part": {ns}}
	var each, afterHeadings [][]*stage.Node
	start := 0
	for i, n := range ns {
		each = append(each, ns[i:i+1])
		if n.Kind == stage.KindHeading {
			afterHeadings = append(afterHeadings, ns[start:i+1])
			start = i + 1
		}
	}
	out["block per part"] = each
	out["cut after each heading"] = append(afterHeadings, ns[start:])
	// Empty parts first, in the middle and last.
	mid := len(ns) / 2
	out["empty parts"] = [][]*stage.Node{{}, ns[:mid], {}, ns[mid:], {}}
	rng := rand.New(rand.NewPCG(seed, 7))
	for r := range 3 {
		var split [][]*stage.Node
		start := 0
		for i := 1; i < len(ns); i++ {
			if rng.IntN(4) == 0 {
				split = append(split, ns[start:i])
				start = i
			}
		}
		out[fmt.Sprintf("random %d", r)] = append(split, ns[start:])
	}
	return out
}

// partsRequest is the request a host sends with a tree in parts: no tree,
// and no title, which comes with the rest of the document.
func partsRequest(t testing.TB, q req) *stage.RenderRequest {
	t.Helper()
	page := a4(t)
	if q.numbering == "" {
		q.numbering = stage.NumberingCenter
	}
	return &stage.RenderRequest{Tokens: q.tokens, Page: page, Numbering: q.numbering, Watermark: q.watermark}
}

// TestRenderPartsMatchesRender: the corpus rendered from its blocks in
// parts, however they are cut, gives the very bytes of the whole tree's
// render, title (from the rest of the document) included.
func TestRenderPartsMatchesRender(t *testing.T) {
	r := newRenderer(t, `{}`)
	for fi, file := range []string{"gfm.md", "small.md", "medium.md", "large.md"} {
		d := readMarkdown(t, file)
		for _, th := range themes {
			t.Run(file+"/"+th.name, func(t *testing.T) {
				t.Parallel()
				want := renderPDF(t, r, req{doc: d, tokens: th.tokens, watermark: "DRAFT"})
				all := splits(d.Root.Children, uint64(fi))
				for _, name := range slices.Sorted(maps.Keys(all)) {
					resp, err := r.RenderParts(context.Background(), partsRequest(t, req{tokens: th.tokens, watermark: "DRAFT"}), partsOf(d, all[name]))
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !bytes.Equal(resp.PDF, want.PDF) || resp.Pages != want.Pages {
						t.Errorf("%s: %d pages, %d bytes; the whole tree: %d pages, %d bytes", name, resp.Pages, len(resp.PDF), want.Pages, len(want.PDF))
						// Both PDFs, kept where asked, tell by qpdf --qdf
						// and diff what differs.
						if dir := os.Getenv("MDPRESS_TEST_PDF_DIR"); dir != "" {
							base := filepath.Join(dir, fmt.Sprintf("%s-%s-%s-%d", strings.ReplaceAll(file, ".", "_"), th.name, strings.ReplaceAll(name, " ", "_"), time.Now().UnixNano()))
							_ = os.WriteFile(base+"-parts.pdf", resp.PDF, 0o644)
							_ = os.WriteFile(base+"-whole.pdf", want.PDF, 0o644)
							t.Logf("wrote %s-{parts,whole}.pdf", base)
						}
					}
				}
			})
		}
	}
	// The request's own title wins over the rest's.
	d := readMarkdown(t, "small.md")
	d.Title = "Given title"
	want := renderPDF(t, r, req{doc: d})
	q := partsRequest(t, req{})
	q.Document.Title = d.Title
	p := partsOf(d, [][]*stage.Node{d.Root.Children})
	p.rest.Title = "Parsed title"
	if resp, err := r.RenderParts(context.Background(), q, p); err != nil || !bytes.Equal(resp.PDF, want.PDF) {
		t.Errorf("with the request's title: %v, or not the PDF of Render", err)
	}
}

// TestRenderPartsKeepsHeadingsWithNext sweeps the filler before a heading
// so that it falls at the foot of a page, and cuts the parts right after
// it: the paragraph that decides whether it moves to the next page is in
// the next part. The PDF must be the whole tree's, and pdftotext must find
// no page ending with a heading.
func TestRenderPartsKeepsHeadingsWithNext(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	const heading = "Keepwithnext heading"
	pageOf := func(pdf []byte) int {
		for i, p := range pageTexts(t, pdf) {
			if strings.Contains(p, heading) {
				return i
			}
		}
		t.Fatal("heading not found")
		return -1
	}
	cutMatters := 0
	for lines := 24; lines < 64; lines++ {
		var b strings.Builder
		for i := range lines {
			fmt.Fprintf(&b, "Line %d of filler.\n\n", i)
		}
		b.WriteString("## " + heading + "\n\nFirst paragraph after the heading, long enough to be a real line of text.\n\nMore text.\n")
		d := markdownDoc(t, b.String())
		q := req{doc: d, tokens: modernTokens, numbering: stage.NumberingNone}
		want := renderPDF(t, r, q)

		// Were the heading the end of the document, would it stay on
		// another page? Then the cut after it matters in this variant.
		h := slices.IndexFunc(d.Root.Children, func(n *stage.Node) bool { return n.Kind == stage.KindHeading })
		alone := q
		alone.doc = stage.Document{Root: &stage.Node{Kind: stage.KindDocument, Children: d.Root.Children[:h+1]}}
		if pageOf(renderPDF(t, r, alone).PDF) != pageOf(want.PDF) {
			cutMatters++
		}

		all := splits(d.Root.Children, uint64(lines))
		for _, name := range []string{"cut after each heading", "block per part"} {
			resp, err := r.RenderParts(context.Background(), partsRequest(t, q), partsOf(d, all[name]))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(resp.PDF, want.PDF) {
				t.Errorf("%d filler lines, %s: not the PDF of the whole tree", lines, name)
			}
			for pi, page := range pageTexts(t, resp.PDF) {
				page = strings.TrimRight(page, "\n")
				if last := page[strings.LastIndexByte(page, '\n')+1:]; last == heading {
					t.Errorf("%d filler lines, %s: page %d ends with the heading", lines, name, pi+1)
				}
			}
		}
	}
	if cutMatters == 0 {
		t.Fatal("no variant put the heading where the paragraph after it decides its page; the sweep tests nothing")
	}
}

// TestRenderPartsErrors: a failing parse's error comes back as it is and
// nothing is painted; a cancelled render stops reading parts; a document
// over the page limit fails as Render does, before its last parts are read.
func TestRenderPartsErrors(t *testing.T) {
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	// The clock is read only to date a PDF as it is painted: counting its
	// reads tells whether a render got that far.
	var painted atomic.Int32
	r := New(nil, WithFonts(set), WithClock(func() time.Time { painted.Add(1); return time.Unix(0, 0) }))
	if _, err := r.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte(`{"maxPages": 2}`)}); err != nil {
		t.Fatal(err)
	}
	d := manyPages(t, 4)
	each := splits(d.Root.Children, 0)["block per part"]
	q := partsRequest(t, req{})

	t.Run("parse fails", func(t *testing.T) {
		painted.Store(0)
		boom := errors.New("the parse failed")
		p := partsOf(d, each[:3])
		p.err = boom
		resp, err := r.RenderParts(context.Background(), q, p)
		if err != boom || resp != nil {
			t.Errorf("got %v, %v; want the parse's error as it is", resp, err)
		}
		if painted.Load() != 0 {
			t.Error("a PDF was painted")
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		painted.Store(0)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := partsOf(d, each)
		p.onNext = func(n int) {
			if n == 3 {
				cancel() // the third part is already there: Next returns it
			}
		}
		_, err := r.RenderParts(ctx, q, p)
		if stage.CodeOf(err) != stage.CodeTimeout || !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want the timeout code over context.Canceled", err)
		}
		if n := p.calls.Load(); n != 3 {
			t.Errorf("Next called %d times, want 3: no part after the cancellation", n)
		}
		if painted.Load() != 0 {
			t.Error("a PDF was painted")
		}
		p = partsOf(d, each)
		if _, err := r.RenderParts(ctx, q, p); stage.CodeOf(err) != stage.CodeTimeout || p.calls.Load() != 0 {
			t.Errorf("already cancelled: %v after %d calls of Next", err, p.calls.Load())
		}
	})

	t.Run("too many pages", func(t *testing.T) {
		_, want := r.Render(context.Background(), &stage.RenderRequest{Document: d, Page: a4(t)})
		var wantErr *stage.Error
		if !errors.As(want, &wantErr) || wantErr.Code != stage.CodeTooLarge {
			t.Fatalf("Render: %v, want too large", want)
		}
		// The block that passes the limit is the last of the shortest
		// prefix that does not fit. It waits for the next part (it might
		// be a heading), so the stream fails on adding that one: Next
		// is called once for each block up to it, plus one.
		over := 1
		for ; over <= len(d.Root.Children); over++ {
			prefix := stage.Document{Root: &stage.Node{Kind: stage.KindDocument, Children: d.Root.Children[:over]}}
			if _, err := r.Render(context.Background(), &stage.RenderRequest{Document: prefix, Page: a4(t)}); err != nil {
				break
			}
		}
		p := partsOf(d, each)
		_, err := r.RenderParts(context.Background(), q, p)
		var got *stage.Error
		if !errors.As(err, &got) || got.Code != wantErr.Code || got.Message != wantErr.Message ||
			!maps.Equal(got.Details, wantErr.Details) || err.Error() != want.Error() {
			t.Fatalf("RenderParts: %v (%+v), Render: %v (%+v)", err, got, want, wantErr)
		}
		if n := int(p.calls.Load()); n > over+1 || n >= len(each) {
			t.Errorf("Next called %d times of %d parts; the limit is passed by block %d", n, len(each), over)
		}
	})
}

// TestRenderPartsBinary renders in parts through the plugin binary over
// gRPC, as the host does: the PDF reads as Render's of the whole tree, and
// the binary lays the parts out as they come rather than joining them
// first.
func TestRenderPartsBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin binary; skipped in -short mode")
	}
	needTool(t, "pdftotext")
	needTool(t, "pdfinfo")
	bin := plugintest.Build(t, "github.com/mdpress/mdpress/plugins/render-fpdf")
	c := plugintest.Launch(t, bin, stage.NameRender, plugintest.Config{JSON: `{"maxPages": 500, "fallbackFonts": []}`}) // as newRenderer: no fallbacks

	d := readMarkdown(t, "medium.md")
	q := req{doc: d, tokens: basicTokens, numbering: stage.NumberingRight, watermark: "SAMPLE"}
	local := renderPDF(t, newRenderer(t, `{}`), q)
	for name, split := range splits(d.Root.Children, 1) {
		if !strings.HasPrefix(name, "random") && name != "cut after each heading" {
			continue
		}
		remote, err := c.RenderParts(context.Background(), partsRequest(t, q), partsOf(d, split))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a, b := pdfText(t, remote.PDF), pdfText(t, local.PDF); a != b {
			t.Errorf("%s: over gRPC in parts, text\n%s\nin process, whole: text\n%s", name, a, b)
		}
		ri, li := pdfInfo(t, remote.PDF), pdfInfo(t, local.PDF)
		if ri["Pages"] != li["Pages"] || remote.Pages != local.Pages || ri["Title"] != li["Title"] || ri["Title"] == "" {
			t.Errorf("%s: in parts %d pages, pdfinfo %q, title %q; whole %d pages, pdfinfo %q, title %q",
				name, remote.Pages, ri["Pages"], ri["Title"], local.Pages, li["Pages"], li["Title"])
		}
	}

	// A renderer that joined the parts before laying them out would wait
	// here for a part that never comes; this one passes the page limit on
	// the parts it has and fails.
	small := plugintest.Launch(t, bin, stage.NameRender, plugintest.Config{JSON: `{"maxPages": 2}`})
	many := manyPages(t, 4)
	p := partsOf(many, splits(many.Root.Children, 0)["block per part"])
	p.hang = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := small.RenderParts(ctx, partsRequest(t, req{}), p); stage.CodeOf(err) != stage.CodeTooLarge {
		t.Errorf("over the page limit with the parse unfinished: %v, want too large", err)
	}
}
