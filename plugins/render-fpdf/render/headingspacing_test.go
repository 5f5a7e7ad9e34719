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

// TestHeadingKeepsOverItsSpaceBelow: a design may put more space under a
// heading than a paragraph gap (headingSpacing [2.2, 4]); a heading still
// keeps with two lines of what follows it across that space, as Chromium
// keeps it (break-after: avoid). The room asked for counted a paragraph
// gap under the heading, so with 46 and 47 lines of code before it on A4
// a heading was left alone at the foot of page 1. The code filler sweeps
// the heading across the foot of page 1.
func TestHeadingKeepsOverItsSpaceBelow(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	tk := modernTokens
	tk.HeadingSpacing = [2]float64{2.2 * tk.ParagraphSpacing, 4 * tk.ParagraphSpacing}
	tk.HeadingLineHeight = 1.25
	const body = "Body text that follows the heading, long enough to fill a line or two of the page."
	for name, md := range map[string]string{
		"paragraph":          "## Runfirst\n\n" + body,
		"heading":            "## Runfirst\n\n### Runsecond\n\n" + body,
		"list":               "## Runfirst\n\n- " + body + "\n- Next",
		"code":               "## Runfirst\n\n```\ncode one\ncode two\ncode three\ncode four\n```",
		"quote":              "## Runfirst\n\n> " + body,
		"table":              "## Runfirst\n\n| a | b |\n|---|---|\n| " + body + " | x |",
		"heading in a quote": "> ## Runfirst\n>\n> " + body,
	} {
		t.Run(name, func(t *testing.T) {
			if sweepHeadingRun(t, r, tk, md) == 0 {
				t.Error("no variant put the heading on page 2; the sweep does not exercise the rule")
			}
		})
	}
}
