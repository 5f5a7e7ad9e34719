package themes

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Font stacks for the tokens' font names. Latin first, then CJK, then
// colour emoji, so each script finds a face that has its glyphs.
var fontStacks = map[string]string{
	"sans":  `"Noto Sans", "DejaVu Sans", "Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans CJK KR", "Noto Sans CJK TC", "Noto Color Emoji", sans-serif`,
	"serif": `"Noto Serif", "DejaVu Serif", "Noto Serif CJK SC", "Noto Serif CJK JP", "Noto Serif CJK KR", "Noto Serif CJK TC", "Noto Sans CJK SC", "Noto Color Emoji", serif`,
	"mono":  `"DejaVu Sans Mono", "Noto Sans Mono", "Noto Sans Mono CJK SC", "Noto Sans Mono CJK JP", "Noto Color Emoji", monospace`,
}

// pt formats points for CSS: at most two decimals, no trailing zeros.
func pt(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + "pt"
}

// writeVars writes the tokens as the custom properties the stylesheets
// read.
func writeVars(b *strings.Builder, s scaled) {
	t := s.Tokens
	b.WriteString(":root {\n")
	vars := [][2]string{
		{"font-body", fontStacks[t.BodyFont]},
		{"font-heading", fontStacks[t.HeadingFont]},
		{"font-mono", fontStacks[t.MonoFont]},
		{"font-size", pt(t.FontSize)},
		{"line-height", strconv.FormatFloat(t.LineHeight, 'f', -1, 64)},
		{"h1", pt(t.HeadingSizes[0])},
		{"h2", pt(t.HeadingSizes[1])},
		{"h3", pt(t.HeadingSizes[2])},
		{"h4", pt(t.HeadingSizes[3])},
		{"h5", pt(t.HeadingSizes[4])},
		{"h6", pt(t.HeadingSizes[5])},
		{"text", t.TextColor},
		{"heading", t.HeadingColor},
		{"link", t.LinkColor},
		{"muted", t.MutedColor},
		{"rule", t.RuleColor},
		{"code-bg", t.CodeBackground},
		{"code", t.CodeColor},
		{"quote-bar", t.QuoteBar},
		{"table-head", t.TableHeaderFill},
		{"accent", t.AccentColor},
		{"space", pt(t.ParagraphSpacing)},
	}
	for _, v := range vars {
		fmt.Fprintf(b, "  --md-%s: %s;\n", v[0], v[1])
	}
	b.WriteString("}\n")
}

// marginBoxes maps a numbering to its @page margin box.
var marginBoxes = map[stage.Numbering]string{
	stage.NumberingLeft:   "@bottom-left",
	stage.NumberingCenter: "@bottom-center",
	stage.NumberingRight:  "@bottom-right",
}

// writePageCSS writes the @page rule: the size in explicit points (CSS
// keywords lack Executive and Folio, and CSS "ledger" is portrait), the
// theme's margins, and the page number in a bottom margin box.
func writePageCSS(b *strings.Builder, s scaled, page stage.PageSize, numbering stage.Numbering) {
	m := s.Margins
	fmt.Fprintf(b, "@page {\n  size: %s %s;\n  margin: %s %s %s %s;\n", pt(page.WidthPt), pt(page.HeightPt), pt(m[0]), pt(m[1]), pt(m[2]), pt(m[3]))
	if box, ok := marginBoxes[numbering]; ok {
		fmt.Fprintf(b, "  %s {\n    content: counter(page);\n    font-family: %s;\n    font-size: %s;\n    color: %s;\n  }\n",
			box, fontStacks[s.BodyFont], pt(s.PageNumberSize), s.MutedColor)
	}
	b.WriteString("}\n")
}

// watermarkColor is light enough to read the text through, on any theme.
const watermarkColor = "rgba(120, 120, 120, 0.28)"

// writeWatermark writes the watermark element. A fixed element is
// repeated on every page when Chromium prints; it sits above everything
// (shaded code blocks and images cannot hide it) and is translucent, so
// the text under it stays legible. Every property is inline and
// !important: user CSS would need to target it on purpose to hide it.
func writeWatermark(b *strings.Builder, text string, s scaled, page stage.PageSize) {
	w := page.WidthPt - s.Margins[1] - s.Margins[3]
	h := page.HeightPt - s.Margins[0] - s.Margins[2]
	// Fit the text in three quarters of the text area's diagonal (the
	// print clips what crosses into the margins) at about 0.68 em per
	// character of spaced bold sans, and never above a fifth of its short
	// side.
	n := max(1, utf8.RuneCountInString(text))
	size := math.Min(0.75*math.Hypot(w, h)/(0.68*float64(n)), 0.2*math.Min(w, h))
	size = math.Max(size, 4)
	style := strings.Join([]string{
		"position: fixed", "top: 50%", "left: 50%", "z-index: 2147483647",
		"display: block", "visibility: visible", "opacity: 1",
		"transform: translate(-50%, -50%) rotate(-45deg)", "transform-origin: center",
		"margin: 0", "padding: 0", "border: 0", "background: none",
		"color: " + watermarkColor,
		"font-family: " + fontStacks["sans"], "font-size: " + pt(size),
		"font-weight: 700", "font-style: normal", "line-height: 1", "letter-spacing: 0.04em",
		"white-space: nowrap", "pointer-events: none", "user-select: none",
		"-webkit-print-color-adjust: exact", "print-color-adjust: exact",
	}, " !important; ") + " !important"
	fmt.Fprintf(b, "<div class=\"mdpress-watermark\" aria-hidden=\"true\" style=\"%s\">%s</div>\n",
		html.EscapeString(style), html.EscapeString(text))
}
