package render

import (
	"math"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestListSpacing places list items as the themes' CSS spaces them on
// Chromium, from the tokens: a tight item's text has no margin, a loose
// item's paragraph half a gap (li > p), the next item is ListItemSpacing
// below the last block of the one before at least (li + li), a list in an
// item has that spacing above it and no margin under it (li > ul), a raw
// HTML <li> spaces as a tight item's text, and a list ends with a
// paragraph's gap under it. fpdf put 0.3 of a gap under every tight item,
// the whole gap under a loose item's paragraph and under every raw <li>,
// 1.8 to 6 pt more than Chromium in basic, 5 in modern.
func TestListSpacing(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	modern := modernTokens
	modern.ListItemSpacing = 0.3 * modern.FontSize
	for _, tk := range []stage.Tokens{basicTokens, modern} {
		line, gap, item := tk.FontSize*tk.LineHeight, tk.ParagraphSpacing, tk.ListItemSpacing
		for _, tc := range []struct {
			name, md string
			// want is how far below the line of each word in words the
			// line of the next starts.
			words []string
			want  []float64
		}{
			{"tight", "Before para.\n\n- Tone\n- Ttwo\n- Tthree\n\nAfter para.\n",
				[]string{"Before", "Tone", "Ttwo", "Tthree", "After"},
				[]float64{line + gap, line + item, line + item, line + gap}},
			{"loose", "Before para.\n\n- Lone\n\n- Ltwo\n\n- Lthree\n\nAfter para.\n",
				[]string{"Before", "Lone", "Ltwo", "Lthree", "After"},
				[]float64{line + gap, line + math.Max(gap/2, item), line + math.Max(gap/2, item), line + gap}},
			{"nested", "Before para.\n\n- Oone\n  - Ione\n  - Itwo\n- Otwo\n\nAfter para.\n",
				[]string{"Before", "Oone", "Ione", "Itwo", "Otwo", "After"},
				[]float64{line + gap, line + item, line + item, line + item, line + gap}},
			{"task", "Before para.\n\n- [ ] Kone\n- [x] Ktwo\n\nAfter para.\n",
				[]string{"Before", "Kone", "Ktwo", "After"},
				[]float64{line + gap, line + item, line + gap}},
			{"raw html", "Before para.\n\n<ul>\n<li>Rone\n<ul><li>Rinner</li></ul>\n</li>\n<li>Rtwo</li>\n</ul>\n\nAfter para.\n",
				[]string{"Before", "Rone", "Rinner", "Rtwo", "After"},
				[]float64{line + gap, line + item, line + item, line + gap}},
		} {
			t.Run(tk.Theme+"/"+tc.name, func(t *testing.T) {
				resp := renderPDF(t, r, req{doc: markdownDoc(t, tc.md), tokens: tk, numbering: stage.NumberingNone})
				top := map[string]float64{}
				for _, w := range pdfBoxes(t, resp.PDF)[0].Words {
					top[w.Text] = w.Y0
				}
				for i, want := range tc.want {
					from, to := tc.words[i], tc.words[i+1]
					a, okA := top[from]
					b, okB := top[to]
					if !okA || !okB {
						t.Fatalf("%s or %s not read back: %s", from, to, strings.Join(tc.words, " "))
					}
					if got := b - a; math.Abs(got-want) > 0.25 {
						t.Errorf("%s is %.2f below %s, want %.2f", to, got, from, want)
					}
				}
			})
		}
	}
}
