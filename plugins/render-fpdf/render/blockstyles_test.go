package render

import (
	"math"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestBlockStylesFromTokens draws code blocks and quotes as basic.css
// prints them on Chromium, from the tokens style-themes sends for basic: a
// code block set in by CodeIndent behind a CodeRule-wide rule in the rule
// colour, its text CodePadding after the rule; a quote set in by
// QuoteIndent, in italics. Without those tokens (an older styler) both are
// drawn as before: code flush and shaded, padded alike, quotes upright.
// basic's code blocks printed flush on white, unmarked, and its quotes
// upright.
func TestBlockStylesFromTokens(t *testing.T) {
	needTool(t, "pdftotext")
	needTool(t, "pdftoppm")
	needTool(t, "pdffonts")
	r := newRenderer(t, `{}`)
	// The code's leading spaces keep the old layout's glyphs off the
	// column where the rule goes.
	src := "Lead paragraph.\n\n```\n        codeword\n```\n\n> Quoteword in a quote.\n"
	styled := basicTokens
	styled.CodeBackground = "#ffffff"
	styled.RuleColor = "#000000"
	styled.CodeIndent, styled.CodeRule, styled.CodePadding = 14.66, 0.75, [3]float64{1.96, 7.82, 0}
	styled.QuoteIndent, styled.QuoteItalic = 17.25, true
	plain := styled
	plain.CodeIndent, plain.CodeRule, plain.CodePadding, plain.QuoteIndent, plain.QuoteItalic = 0, 0, [3]float64{}, 0, false

	const dpi = 144
	black := colour{0, 0, 0, 60}
	left := styled.Margins[3]
	for _, tc := range []struct {
		name   string
		tokens stage.Tokens
		// code and quote are where the words start; rule whether the rule
		// is drawn, italic whether the quote is.
		code, quote  float64
		rule, italic bool
	}{
		{"basic", styled, left + 14.66 + 0.75 + 7.82 + 8*styled.FontSize*0.9*0.6, left + 17.25, true, true},
		{"none sent", plain, left + styled.FontSize*0.9*0.7 + 8*styled.FontSize*0.9*0.6, left, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: tc.tokens, numbering: stage.NumberingNone})
			words := map[string]bboxWord{}
			for _, w := range pdfBoxes(t, resp.PDF)[0].Words {
				words[w.Text] = w
			}
			lead, code, quote := words["Lead"], words["codeword"], words["Quoteword"]
			if lead.Text == "" || code.Text == "" || quote.Text == "" {
				t.Fatalf("words read back: %v", words)
			}
			if math.Abs(lead.X0-left) > 1 {
				t.Errorf("the paragraph starts at %.2f, not at the margin %.2f", lead.X0, left)
			}
			if math.Abs(code.X0-tc.code) > 1 {
				t.Errorf("the code starts at %.2f, want %.2f", code.X0, tc.code)
			}
			// The bar and the space after it come after the indent.
			if bar := math.Max(2, styled.FontSize*0.25) + styled.FontSize; math.Abs(quote.X0-(tc.quote+bar)) > 1 {
				t.Errorf("the quote starts at %.2f, want %.2f", quote.X0, tc.quote+bar)
			}
			w, h, px := rasterRGB(t, resp.PDF, dpi)
			x := left + 14.66
			n := countNear(w, h, px, dpi, x-0.5, code.Y0, x+1.25, code.Y1, black)
			if tc.rule && n < int(0.75*(code.Y1-code.Y0)) {
				t.Errorf("%d black pixels where the rule goes beside the code", n)
			}
			if !tc.rule && n > 0 {
				t.Errorf("%d black pixels where no rule goes", n)
			}
			fonts := runFile(t, resp.PDF, "pdffonts")
			if italic := strings.Contains(fonts, "Serif-Italic"); italic != tc.italic {
				t.Errorf("an italic serif face among the fonts: %v, want %v:\n%s", italic, tc.italic, fonts)
			}
		})
	}
}
