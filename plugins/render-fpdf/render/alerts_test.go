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

// TestAlertColoursFromTokens draws each kind of alert in the colour the
// tokens give it (an operator's design, through style-themes), and in
// GitHub's when the tokens carry none (a styler older than alert_colors).
func TestAlertColoursFromTokens(t *testing.T) {
	needTool(t, "pdftoppm")
	r := newRenderer(t, `{}`)
	d := alertsDoc(t)
	github := map[string]colour{
		"note": {0x09, 0x69, 0xda, 2}, "tip": {0x1a, 0x7f, 0x37, 2}, "important": {0x82, 0x50, 0xdf, 2},
		"warning": {0x9a, 0x67, 0x00, 2}, "caution": {0xd1, 0x24, 0x2f, 2},
	}
	operator := map[string]colour{
		"note": {0x00, 0xff, 0xff, 2}, "tip": {0xff, 0x00, 0xff, 2}, "important": {0xff, 0xff, 0x00, 2},
		"warning": {0x00, 0x00, 0xff, 2}, "caution": {0x00, 0xff, 0x00, 2},
	}
	tokens := basicTokens
	tokens.AlertColors = stage.AlertColors{Note: "#00ffff", Tip: "#ff00ff", Important: "#ffff00", Warning: "#0000ff", Caution: "#00ff00"}
	for _, tc := range []struct {
		name      string
		tokens    stage.Tokens
		want, not map[string]colour
	}{
		{"operator", tokens, operator, github},
		{"none sent", basicTokens, github, operator},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := renderPDF(t, r, req{doc: d, tokens: tc.tokens, numbering: stage.NumberingNone})
			const dpi = 72
			w, h, px := rasterRGB(t, resp.PDF, dpi)
			for kind, c := range tc.want {
				if n := countNear(w, h, px, dpi, 0, 0, float64(w), float64(h), c); n < 100 {
					t.Errorf("%s: %d pixels of its colour %v on page 1", kind, n, c)
				}
				if n := countNear(w, h, px, dpi, 0, 0, float64(w), float64(h), tc.not[kind]); n > 0 {
					t.Errorf("%s: %d pixels of the colour %v it should not have", kind, n, tc.not[kind])
				}
			}
		})
	}
}
