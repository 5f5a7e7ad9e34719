package render

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestHeadingSpacing places a heading as the themes' CSS does on Chromium,
// from the tokens: HeadingSpacing above it (collapsing with the gap under
// the paragraph before) and below it, its lines HeadingLineHeight times its
// size, and modern's rule under an h1 and an h2 0.25em and 0.2em below the
// text, 2px and 1px wide. fpdf put a level's gap above (1.7 paragraph gaps
// for an h1 down to 1.2 for an h6), 0.7 of one below, and set headings on
// the text's line height: headings were 1.4-4.4 pt off Chromium's.
func TestHeadingSpacing(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	basic, modern := basicTokens, modernTokens
	basic.HeadingSpacing, basic.HeadingLineHeight = [2]float64{2 * basic.ParagraphSpacing, 0.8 * basic.ParagraphSpacing}, 1.2
	modern.HeadingSpacing, modern.HeadingLineHeight = [2]float64{2.2 * modern.ParagraphSpacing, modern.ParagraphSpacing}, 1.25
	rule := map[int]float64{1: 0.25, 2: 0.2}
	width := map[int]float64{1: 1.5, 2: 0.75}
	for _, tk := range []stage.Tokens{basic, modern} {
		for level := 1; level <= 4; level++ {
			t.Run(fmt.Sprintf("%s/h%d", tk.Theme, level), func(t *testing.T) {
				md := "Before para.\n\n" + strings.Repeat("#", level) + " Heading\n\nAfter para.\n"
				resp := renderPDF(t, r, req{doc: markdownDoc(t, md), tokens: tk, numbering: stage.NumberingNone})
				top := map[string]float64{}
				for _, w := range pdfBoxes(t, resp.PDF)[0].Words {
					top[w.Text] = w.Y0
				}
				size := tk.HeadingSizes[level-1]
				want := tk.FontSize*tk.LineHeight + tk.HeadingSpacing[0] + size*tk.HeadingLineHeight + tk.HeadingSpacing[1]
				if tk.HeadingRule && level <= 2 {
					want += size*rule[level] + width[level]
				}
				if got := top["After"] - top["Before"]; math.Abs(got-want) > 0.25 {
					t.Errorf("After is %.2f below Before, want %.2f", got, want)
				}
			})
		}
	}
}
