package render

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// alertsDoc is a document of GitHub's alerts as parse-goldmark's tree has
// them (see stage.Node), long enough to break across pages, with a plain
// quote between them. This package's test parser knows no alerts, so the
// quotes it builds are made alerts here.
func alertsDoc(t testing.TB) stage.Document {
	var src strings.Builder
	src.WriteString("# Alerts\n\n")
	for i := range 40 {
		src.WriteString("> The body of alert " + itoa(i) + ", long enough to wrap over a second line in the column of the page.\n>\n> A second paragraph.\n\n")
		if i%7 == 0 {
			src.WriteString("> A plain quote.\n\n")
		}
	}
	d := markdownDoc(t, src.String())
	kinds := []string{"note", "tip", "important", "warning", "caution"}
	n := 0
	for _, b := range d.Root.Children {
		if b.Kind != stage.KindBlockquote || strings.HasPrefix(b.PlainText(), "A plain") {
			continue
		}
		kind := kinds[n%len(kinds)]
		n++
		title := &stage.Node{Kind: stage.KindParagraph, Attrs: map[string]string{"alert_title": "true"},
			Children: []*stage.Node{{Kind: stage.KindText, Text: strings.ToUpper(kind[:1]) + kind[1:]}}}
		b.Attrs = map[string]string{"alert": kind}
		b.Children = append([]*stage.Node{title}, b.Children...)
	}
	return d
}

// TestRenderPartsAlerts: alerts laid out from parts, however the parse cut
// them, give the bytes of the whole tree's render, which prints each
// alert's title before its body.
func TestRenderPartsAlerts(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	d := alertsDoc(t)
	for _, th := range themes {
		t.Run(th.name, func(t *testing.T) {
			want := renderPDF(t, r, req{doc: d, tokens: th.tokens})
			if want.Pages < 2 {
				t.Fatalf("%d page: the alerts should break across pages", want.Pages)
			}
			text := strings.Join(strings.Fields(bodyText(t, want.PDF)), " ")
			for _, s := range []string{"Note The body of alert 0,", "Tip The body of alert 1,", "Caution The body of alert 39,", "A plain quote. Important"} {
				if !strings.Contains(text, s) {
					t.Errorf("no %q in the text:\n%.2000s", s, text)
				}
			}
			all := splits(d.Root.Children, 9)
			for _, name := range slices.Sorted(maps.Keys(all)) {
				resp, err := r.RenderParts(context.Background(), partsRequest(t, req{tokens: th.tokens}), partsOf(d, all[name]))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !bytes.Equal(resp.PDF, want.PDF) || resp.Pages != want.Pages {
					t.Errorf("%s: %d pages, %d bytes; the whole tree: %d pages, %d bytes", name, resp.Pages, len(resp.PDF), want.Pages, len(want.PDF))
				}
			}
		})
	}
}
