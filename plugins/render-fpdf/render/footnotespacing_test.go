package render

import (
	"math"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestFootnoteSpacing spaces the notes as the items of the themes'
// .footnotes ol on Chromium: a note's paragraph has half a gap under it
// (li > p), the next note starts ListItemSpacing below at least (li + li).
// fpdf put a whole gap under a note's paragraph: 3 pt too far apart in
// basic, 4 in modern. The notes' text is FootnoteSize times the body's,
// as .footnotes { font-size } is; fpdf set it at 0.85 where basic's CSS
// has 0.9em and modern's 0.88em, each note line 0.3-0.8 pt short.
func TestFootnoteSpacing(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	modern := modernTokens
	modern.ListItemSpacing = 0.3 * modern.FontSize
	// The themes' own sizes, and none (0.85) from an older styler.
	basic, sized := basicTokens, modern
	basic.FootnoteSize, sized.FootnoteSize = 0.9, 0.88
	basic.Theme, sized.Theme = "basic footnotes 0.9em", "modern footnotes 0.88em"
	for _, tk := range []stage.Tokens{basicTokens, modern, basic, sized} {
		t.Run(tk.Theme, func(t *testing.T) {
			md := "Text[^1] and[^2] more[^3].\n\n[^1]: Nalpha.\n[^2]: Nbravo.\n[^3]: Ncharlie.\n"
			resp := renderPDF(t, r, req{doc: markdownDoc(t, md), tokens: tk, numbering: stage.NumberingNone})
			top := map[string]float64{}
			for _, w := range pdfBoxes(t, resp.PDF)[0].Words {
				top[w.Text] = w.Y0
			}
			want := 0.85*tk.FontSize*tk.LineHeight + math.Max(tk.ParagraphSpacing/2, tk.ListItemSpacing)
			if tk.FootnoteSize > 0 {
				want = tk.FootnoteSize*tk.FontSize*tk.LineHeight + math.Max(tk.ParagraphSpacing/2, tk.ListItemSpacing)
			}
			for _, p := range [][2]string{{"Nalpha.", "Nbravo."}, {"Nbravo.", "Ncharlie."}} {
				a, okA := top[p[0]]
				b, okB := top[p[1]]
				if !okA || !okB {
					t.Fatalf("%s or %s not read back", p[0], p[1])
				}
				if got := b - a; math.Abs(got-want) > 0.25 {
					t.Errorf("%s is %.2f below %s, want %.2f", p[1], got, p[0], want)
				}
			}
		})
	}
}
