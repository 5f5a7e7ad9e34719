package render

import (
	"math"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestCodeLineSpacing places a code block's lines CodeLineHeight times its
// code's size apart, its code CodeSize times the text's, as the themes'
// pre { line-height } and code { font-size } on Chromium; a blank line
// takes a line's height. fpdf set every theme's code at 0.9em on 1.35
// lines: 1.3 pt too far apart in basic (0.85em, 1.3), 0.6 too close in
// modern (0.88em, 1.45), twice that over a blank line.
func TestCodeLineSpacing(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	basic, modern := basicTokens, modernTokens
	basic.CodeSize, basic.CodeLineHeight = 0.85, 1.3
	modern.CodeSize, modern.CodeLineHeight = 0.88, 1.45
	for _, tk := range []stage.Tokens{basic, modern} {
		t.Run(tk.Theme, func(t *testing.T) {
			md := "Before para.\n\n```\nAlpha\nBravo\n\nCharlie\n```\n\n- item\n\n  ```\n  Delta\n  Echo\n  ```\n"
			resp := renderPDF(t, r, req{doc: markdownDoc(t, md), tokens: tk, numbering: stage.NumberingNone})
			top := map[string]float64{}
			for _, w := range pdfBoxes(t, resp.PDF)[0].Words {
				top[w.Text] = w.Y0
			}
			line := tk.FontSize * tk.CodeSize * tk.CodeLineHeight
			for _, p := range []struct {
				from, to string
				want     float64
			}{
				{"Alpha", "Bravo", line},
				{"Bravo", "Charlie", 2 * line},
				{"Delta", "Echo", line},
			} {
				a, okA := top[p.from]
				b, okB := top[p.to]
				if !okA || !okB {
					t.Fatalf("%s or %s not read back", p.from, p.to)
				}
				if got := b - a; math.Abs(got-p.want) > 0.25 {
					t.Errorf("%s is %.2f below %s, want %.2f", p.to, got, p.from, p.want)
				}
			}
		})
	}
}
