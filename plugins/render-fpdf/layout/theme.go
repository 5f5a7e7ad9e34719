package layout

import (
	"math"
	"strconv"
	"strings"

	"github.com/mdpress/mdpress/plugins/internal/highlight"
	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
	"github.com/mdpress/mdpress/sdk/stage"
)

// theme is stage.Tokens resolved: defaults for what a styler left out,
// colours parsed, margins fitted to the page.
type theme struct {
	body, heading, mono fonts.Family

	size, lineHeight float64
	headingSizes     [6]float64
	// codeSize is the size of code in body text, codeLineHeight a code
	// block's line height as a multiple of its code's size.
	codeSize, codeLineHeight float64

	text, headingColor, link, muted, rule, codeBg, codeText, quoteBar, tableHeaderFill, accent RGB

	// palette colours code tokens by highlight class; a class it lacks,
	// and every class when it is empty, is codeText.
	palette map[string]RGB

	// alerts colour the bar and title of GitHub's alerts, by alertKinds.
	alerts [len(alertKinds)]RGB

	margins     [4]float64 // top, right, bottom, left
	gap         float64
	headingRule bool
	// headingSpace is the space above and below a heading, when
	// headingSpaced; headingLineHeight a heading's line height as a
	// multiple of its size.
	headingSpace      [2]float64
	headingSpaced     bool
	headingLineHeight float64

	// codeIndent sets code blocks in from the column's left, codeRule is
	// the width of the rule down their left side (0: none), and codePad
	// the space inside them: above and below, left, right.
	codeIndent, codeRule float64
	codePad              [3]float64
	// quoteIndent sets quotes and alerts in on both sides; quoteItalic
	// sets a quote's text in italics.
	quoteIndent float64
	quoteItalic bool
	// quoteFill is the ground of quotes and alerts, when quoteFilled;
	// quotePad the space inside them above and below, alertPad an
	// alert's.
	quoteFill          RGB
	quoteFilled        bool
	quotePad, alertPad float64
	// stripe is the ground of every second body row of a table, when
	// striped.
	stripe  RGB
	striped bool
	// linkPlain draws links without an underline.
	linkPlain bool
	// headingItalic, headingRegular and headingMuted set a heading, by
	// level, in italics, not bold, and in muted.
	headingItalic, headingRegular, headingMuted [6]bool
	// strikeMuted draws struck-through text in muted.
	strikeMuted bool
	// itemGap is the space between one list item and the next, and above
	// a list nested in an item.
	itemGap float64
	// footnoteScale is the size of the footnotes' text as a multiple of
	// the body's.
	footnoteScale float64
}

// defaultTokens are used field by field where the styler sent zero values,
// so a renderer called without a styler still produces a sensible document.
var defaultTokens = stage.Tokens{
	BodyFont: "sans", HeadingFont: "sans", MonoFont: "mono",
	FontSize: 11, LineHeight: 1.45,
	HeadingSizes: [6]float64{24, 19, 15.5, 13, 11.5, 11},
	TextColor:    "#1f2328", HeadingColor: "#1f2328", LinkColor: "#0969da", MutedColor: "#59636e",
	RuleColor: "#d1d9e0", CodeBackground: "#f6f8fa", CodeColor: "#1f2328", QuoteBar: "#d1d9e0",
	TableHeaderFill: "#f6f8fa", AccentColor: "#d1d9e0",
	Margins:          [4]float64{56, 56, 56, 56},
	ParagraphSpacing: 9,
	// GitHub's (light theme), which every theme of style-themes sends
	// unless an operator's design changes them; a styler older than
	// alert_colors sends none.
	AlertColors: stage.AlertColors{Note: "#0969da", Tip: "#1a7f37", Important: "#8250df", Warning: "#9a6700", Caution: "#d1242f"},
}

func family(name string, def fonts.Family) fonts.Family {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "sans", "sans-serif":
		return fonts.Sans
	case "serif":
		return fonts.Serif
	case "mono", "monospace":
		return fonts.Mono
	}
	return def
}

func positive(v, def, limit float64) float64 {
	if v > 0 && v <= limit && !math.IsInf(v, 0) {
		return v
	}
	return def
}

func newTheme(t stage.Tokens, page stage.PageSize) theme {
	d := defaultTokens
	th := theme{
		body:        family(t.BodyFont, fonts.Sans),
		heading:     family(t.HeadingFont, family(t.BodyFont, fonts.Sans)),
		mono:        family(t.MonoFont, fonts.Mono),
		size:        positive(t.FontSize, d.FontSize, 72),
		lineHeight:  positive(t.LineHeight, d.LineHeight, 4),
		headingRule: t.HeadingRule,
	}
	if th.lineHeight < 1 {
		th.lineHeight = 1
	}
	for i := range th.headingSizes {
		th.headingSizes[i] = positive(t.HeadingSizes[i], d.HeadingSizes[i]*th.size/d.FontSize, 144)
	}
	th.codeSize = th.size * positive(t.CodeSize, 0.9, 3)
	th.codeLineHeight = positive(t.CodeLineHeight, 1.35, 4)
	th.headingLineHeight = positive(t.HeadingLineHeight, th.lineHeight, 4)
	if t.HeadingSpacing != ([2]float64{}) {
		th.headingSpaced = true
		for i, s := range t.HeadingSpacing {
			th.headingSpace[i] = positive(s, 0, 144)
		}
	}
	th.codeIndent = positive(t.CodeIndent, 0, 144)
	th.codeRule = positive(t.CodeRule, 0, 12)
	th.codePad = [3]float64{th.codeSize * 0.7, th.codeSize * 0.7, th.codeSize * 0.7}
	if t.CodePadding != ([3]float64{}) {
		for i, p := range t.CodePadding {
			th.codePad[i] = positive(p, 0, 144)
		}
	}
	th.quoteIndent = positive(t.QuoteIndent, 0, 144)
	th.quoteItalic = t.QuoteItalic
	th.quoteFill, th.quoteFilled = parseColor(t.QuoteFill)
	th.quotePad = positive(t.QuotePadding, 0, 144)
	th.alertPad = positive(t.AlertPadding, th.quotePad, 144)
	th.stripe, th.striped = parseColor(t.TableStripe)
	th.linkPlain = t.LinkPlain
	th.headingItalic, th.headingRegular, th.headingMuted = t.HeadingItalic, t.HeadingRegular, t.HeadingMuted
	th.strikeMuted = t.StrikeMuted
	th.itemGap = positive(t.ListItemSpacing, 0, 144)
	th.footnoteScale = positive(t.FootnoteSize, 0.85, 3)
	th.gap = positive(t.ParagraphSpacing, th.size*0.8, 144)
	th.text = color(t.TextColor, d.TextColor)
	th.headingColor = color(t.HeadingColor, t.TextColor, d.HeadingColor)
	th.link = color(t.LinkColor, d.LinkColor)
	th.muted = color(t.MutedColor, d.MutedColor)
	th.rule = color(t.RuleColor, d.RuleColor)
	th.codeBg = color(t.CodeBackground, d.CodeBackground)
	th.codeText = color(t.CodeColor, t.TextColor, d.CodeColor)
	th.quoteBar = color(t.QuoteBar, t.RuleColor, d.QuoteBar)
	th.tableHeaderFill = color(t.TableHeaderFill, t.CodeBackground, d.TableHeaderFill)
	th.accent = color(t.AccentColor, t.RuleColor, d.AccentColor)
	th.margins = fitMargins(t.Margins, d.Margins, page)
	a, da := t.AlertColors, d.AlertColors
	th.alerts = [...]RGB{
		color(a.Note, da.Note), color(a.Tip, da.Tip), color(a.Important, da.Important),
		color(a.Warning, da.Warning), color(a.Caution, da.Caution),
	}
	for _, class := range highlight.Classes {
		if c, ok := parseColor(highlight.Colour(t.CodePalette, class)); ok {
			if th.palette == nil {
				th.palette = map[string]RGB{}
			}
			th.palette[class] = c
		}
	}
	return th
}

// fitMargins keeps margins sane on every paper size: a margin meant for A4
// would leave no room on A9, so each is capped at a sixth of the page side.
func fitMargins(m, def [4]float64, page stage.PageSize) [4]float64 {
	var out [4]float64
	for i := range m {
		side := page.HeightPt
		if i%2 == 1 {
			side = page.WidthPt
		}
		v := m[i]
		if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			v = def[i]
		}
		out[i] = math.Min(v, side/6)
	}
	return out
}

// color parses the first of vals that is a valid CSS colour.
func color(vals ...string) RGB {
	for _, v := range vals {
		if c, ok := parseColor(v); ok {
			return c
		}
	}
	return RGB{}
}

// parseColor reads #rgb, #rrggbb, rgb(r, g, b) and the CSS basic colour
// names: what themes and inline <span style="color:..."> use in practice.
func parseColor(s string) (RGB, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if strings.HasPrefix(s, "#") {
		h := s[1:]
		if len(h) == 3 {
			h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
		}
		if len(h) != 6 {
			return RGB{}, false
		}
		v, err := strconv.ParseUint(h, 16, 32)
		if err != nil {
			return RGB{}, false
		}
		return RGB{uint8(v >> 16), uint8(v >> 8), uint8(v)}, true
	}
	if inner, ok := strings.CutPrefix(s, "rgb("); ok {
		parts := strings.Split(strings.TrimSuffix(inner, ")"), ",")
		if len(parts) != 3 {
			return RGB{}, false
		}
		var c [3]uint8
		for i, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 0 || n > 255 {
				return RGB{}, false
			}
			c[i] = uint8(n)
		}
		return RGB{c[0], c[1], c[2]}, true
	}
	c, ok := namedColors[s]
	return c, ok
}

var namedColors = map[string]RGB{
	"black": {0, 0, 0}, "silver": {192, 192, 192}, "gray": {128, 128, 128}, "grey": {128, 128, 128},
	"white": {255, 255, 255}, "maroon": {128, 0, 0}, "red": {255, 0, 0}, "purple": {128, 0, 128},
	"fuchsia": {255, 0, 255}, "magenta": {255, 0, 255}, "green": {0, 128, 0}, "lime": {0, 255, 0},
	"olive": {128, 128, 0}, "yellow": {255, 255, 0}, "navy": {0, 0, 128}, "blue": {0, 0, 255},
	"teal": {0, 128, 128}, "aqua": {0, 255, 255}, "cyan": {0, 255, 255}, "orange": {255, 165, 0},
	"brown": {165, 42, 42}, "pink": {255, 192, 203}, "darkred": {139, 0, 0}, "darkgreen": {0, 100, 0},
	"darkblue": {0, 0, 139}, "darkorange": {255, 140, 0}, "crimson": {220, 20, 60}, "gold": {255, 215, 0},
	"indigo": {75, 0, 130}, "violet": {238, 130, 238}, "royalblue": {65, 105, 225}, "steelblue": {70, 130, 180},
	"darkgray": {169, 169, 169}, "darkgrey": {169, 169, 169}, "lightgray": {211, 211, 211}, "lightgrey": {211, 211, 211},
	"dimgray": {105, 105, 105}, "dimgrey": {105, 105, 105}, "tomato": {255, 99, 71}, "seagreen": {46, 139, 87},
}
