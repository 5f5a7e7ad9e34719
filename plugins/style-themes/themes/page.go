package themes

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mdpress/mdpress/plugins/internal/emoji"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Font stacks for the tokens' font names. Latin first, then CJK, then
// colour emoji, so each script finds a face that has its glyphs. The
// pictographs past U+1F000 come from the colour font before any other
// (emojiFace): DejaVu Sans has black outlines of the emoticons, so 😀
// printed in black beside a colour 🎉.
var fontStacks = map[string]string{
	"sans":  `"Noto Sans", "mdpress emoji", "DejaVu Sans", "Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans CJK KR", "Noto Sans CJK TC", "Noto Color Emoji", sans-serif`,
	"serif": `"Noto Serif", "mdpress emoji", "DejaVu Serif", "Noto Serif CJK SC", "Noto Serif CJK JP", "Noto Serif CJK KR", "Noto Serif CJK TC", "Noto Sans CJK SC", "Noto Color Emoji", serif`,
	"mono":  `"DejaVu Sans Mono", "mdpress emoji", "Noto Sans Mono", "Noto Sans Mono CJK SC", "Noto Sans Mono CJK JP", "Noto Color Emoji", monospace`,
}

// emojiFace is "mdpress emoji": the colour emoji font for the
// supplementary plane's pictographs (emoticons, flags, skin tones, what
// emoji are mostly made of), the joiners, keycap and tags that sequences
// of them hold, without which 👨‍👩‍👧 split into three faces, and the
// symbols below them that Unicode presents as emoji by default (⚡ ☕ ✨,
// emoji.BMP): DejaVu has black outlines of some, so GitHub's :zap:
// printed in black. The symbols that Unicode presents as text by default
// (♥ ✔ ☺) stay text.
var emojiFace = func() string {
	var b strings.Builder
	b.WriteString("@font-face {\n  font-family: \"mdpress emoji\";\n" +
		"  src: local(\"Noto Color Emoji\"), local(\"NotoColorEmoji\");\n  unicode-range: ")
	for _, r := range emoji.BMP {
		if r.Lo == r.Hi {
			fmt.Fprintf(&b, "U+%X, ", r.Lo)
		} else {
			fmt.Fprintf(&b, "U+%X-%X, ", r.Lo, r.Hi)
		}
	}
	b.WriteString("U+200D, U+20E3, U+FE0F, U+1F000-1FAFF, U+E0020-E007F;\n}\n")
	return b.String()
}()

// pt formats points for CSS: at most two decimals, no trailing zeros.
func pt(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + "pt"
}

// em formats a multiple of the size around for CSS.
func em(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "em" }

// writeVars writes the tokens as the custom properties the stylesheets
// read.
func writeVars(b *strings.Builder, s scaled) {
	t := s.Tokens
	b.WriteString(emojiFace)
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
		{"code-indent", pt(t.CodeIndent)},
		{"code-rule", pt(t.CodeRule)},
		{"code-pad-block", pt(t.CodePadding[0])},
		{"code-pad-start", pt(t.CodePadding[1])},
		{"code-pad-end", pt(t.CodePadding[2])},
		{"quote-indent", pt(t.QuoteIndent)},
		{"quote-style", quoteStyle(t.QuoteItalic)},
		{"quote-bg", fill(t.QuoteFill)},
		{"quote-pad", pt(t.QuotePadding)},
		{"table-stripe", fill(t.TableStripe)},
		{"link-decoration", linkDecoration(t.LinkPlain)},
		{"strike-color", strikeColor(t)},
		{"alert-pad", pt(alertPad(t))},
		{"list-item-space", pt(t.ListItemSpacing)},
		{"code-size", em(t.CodeSize)},
		{"code-line-height", strconv.FormatFloat(t.CodeLineHeight, 'f', -1, 64)},
		{"heading-space-above", pt(t.HeadingSpacing[0])},
		{"heading-space-below", pt(t.HeadingSpacing[1])},
		{"heading-line-height", strconv.FormatFloat(t.HeadingLineHeight, 'f', -1, 64)},
		{"footnote-size", em(t.FootnoteSize)},
	}
	for i := range t.HeadingSizes {
		h := fmt.Sprintf("h%d-", i+1)
		vars = append(vars,
			[2]string{h + "style", headingStyle(t.HeadingItalic[i])},
			[2]string{h + "weight", headingWeight(t.HeadingRegular[i])},
			[2]string{h + "color", headingColor(t, i)})
	}
	for _, v := range vars {
		fmt.Fprintf(b, "  --md-%s: %s;\n", v[0], v[1])
	}
	b.WriteString("}\n")
}

// fill is a colour token as a background: none when it is empty.
func fill(c string) string {
	if c == "" {
		return "transparent"
	}
	return c
}

func linkDecoration(plain bool) string {
	if plain {
		return "none"
	}
	return "underline"
}

// headingStyle is inherit, not normal, for an upright level: a heading in
// an italic quote stays italic, as render-fpdf draws it. A custom property
// set to inherit on the root has nothing to inherit, so font-style:
// var(--md-hN-style) is invalid at computed-value time and font-style,
// an inherited property, inherits.
func headingStyle(italic bool) string {
	if italic {
		return "italic"
	}
	return "inherit"
}

func headingWeight(regular bool) string {
	if regular {
		return "normal"
	}
	return "bold"
}

func headingColor(t stage.Tokens, level int) string {
	if t.HeadingMuted[level] {
		return t.MutedColor
	}
	return t.HeadingColor
}

// strikeColor is currentcolor, the colour of the text around it, when
// struck text is not muted.
func strikeColor(t stage.Tokens) string {
	if t.StrikeMuted {
		return t.MutedColor
	}
	return "currentcolor"
}

// alertPad is a quote's padding where the tokens give alerts none of
// their own, as renderers read AlertPadding.
func alertPad(t stage.Tokens) float64 {
	if t.AlertPadding > 0 {
		return t.AlertPadding
	}
	return t.QuotePadding
}

func quoteStyle(italic bool) string {
	if italic {
		return "italic"
	}
	return "normal"
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
