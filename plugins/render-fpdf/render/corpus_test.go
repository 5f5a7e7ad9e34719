package render

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
	"github.com/mdpress/mdpress/sdk/stage"
)

// The font set is parsed once for the whole test binary, as the plugin
// parses it once per process. The renderers of the tests have no system
// fallback fonts, whatever the machine has: those that test fallbacks
// name them.
var testFonts = sync.OnceValues(fonts.Load)

func newRenderer(t testing.TB, config string) *Renderer {
	t.Helper()
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	r := New(nil, WithFonts(set), WithSystemFallbacks(), WithClock(func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }))
	if _, err := r.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte(config)}); err != nil {
		t.Fatal(err)
	}
	return r
}

type req struct {
	doc       stage.Document
	tokens    stage.Tokens
	page      string
	numbering stage.Numbering
	watermark string
}

func renderPDF(t testing.TB, r *Renderer, q req) *stage.RenderResponse {
	t.Helper()
	if q.page == "" {
		q.page = "A4"
	}
	page, ok := papers.Lookup(q.page)
	if !ok {
		t.Fatalf("unknown page size %s", q.page)
	}
	if q.numbering == "" {
		q.numbering = stage.NumberingCenter
	}
	resp, err := r.Render(context.Background(), &stage.RenderRequest{
		Document: q.doc, Tokens: q.tokens, Page: page, Numbering: q.numbering, Watermark: q.watermark,
	})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return resp
}

func readMarkdown(t testing.TB, name string) stage.Document {
	t.Helper()
	src, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return markdownDoc(t, string(src))
}

var themes = []struct {
	name   string
	tokens stage.Tokens
}{{"modern", modernTokens}, {"basic", basicTokens}}

// TestCorpus renders real-world Markdown and a file with every GFM construct
// in both themes and reads the PDFs back: every word of the source is there
// in reading order, and no word strays outside the margins.
func TestCorpus(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	for _, file := range []string{"gfm.md", "scripts.md", "small.md", "medium.md", "large.md"} {
		doc := readMarkdown(t, file)
		want := words(drawable(t, expectedText(doc.Root)))
		for _, th := range themes {
			t.Run(file+"/"+th.name, func(t *testing.T) {
				t.Parallel()
				resp := renderPDF(t, r, req{doc: doc, tokens: th.tokens})
				text := bodyText(t, resp.PDF)
				want := want
				if file == "scripts.md" {
					// Right-to-left text is drawn in display order: the
					// reading order puts it back. Arabic reads back as the
					// letters written, not the presentation forms drawn
					// (see the README's Characters), with no NFKC.
					text = readingText(t, resp.PDF)
				}
				checkWordsInOrder(t, want, words(text))
				checkInsideMargins(t, pdfBoxes(t, resp.PDF), th.tokens.Margins, 1)
				if got := pdfInfo(t, resp.PDF)["Pages"]; got != itoa(resp.Pages) {
					t.Errorf("RenderResponse.Pages = %d, pdfinfo says %s", resp.Pages, got)
				}
			})
		}
	}
}
