package themes

import (
	"fmt"
	"math"
	"regexp"

	"github.com/mdpress/mdpress/plugins/internal/highlight"
	"github.com/mdpress/mdpress/sdk/stage"
)

// design is a theme's look on an A4 page, before it is scaled to the
// requested page. It is also the schema of an operator's <name>.json.
type design struct {
	BodyFont         string     `json:"bodyFont"`    // "sans" or "serif"
	HeadingFont      string     `json:"headingFont"` // "sans" or "serif"
	FontSize         float64    `json:"fontSize"`
	LineHeight       float64    `json:"lineHeight"`
	HeadingSizes     [6]float64 `json:"headingSizes"`
	TextColor        string     `json:"textColor"`
	HeadingColor     string     `json:"headingColor"`
	LinkColor        string     `json:"linkColor"`
	MutedColor       string     `json:"mutedColor"`
	RuleColor        string     `json:"ruleColor"`
	CodeBackground   string     `json:"codeBackground"`
	CodeColor        string     `json:"codeColor"`
	QuoteBar         string     `json:"quoteBar"`
	TableHeaderFill  string     `json:"tableHeaderFill"`
	AccentColor      string     `json:"accentColor"`
	ParagraphSpacing float64    `json:"paragraphSpacing"`
	HeadingRule      bool       `json:"headingRule"`
	Margin           float64    `json:"margin"`       // top, left and right
	MarginBottom     float64    `json:"marginBottom"` // leaves room for the page number
	PageNumberSize   float64    `json:"pageNumberSize"`
	// CodePalette colours the tokens of code blocks that name their
	// language; a class left empty is codeColor.
	CodePalette codePalette `json:"codePalette"`
	// AlertColors colour the bar and title of each kind of GitHub alert.
	AlertColors alertColors `json:"alertColors"`
	// CodeIndent is the margin before a code block on its start side,
	// CodeRule the width of the rule in ruleColor down that side, and
	// CodePadding the space inside it: above and below, on the start
	// side, on the other side.
	CodeIndent  float64    `json:"codeIndent"`
	CodeRule    float64    `json:"codeRule"`
	CodePadding [3]float64 `json:"codePadding"`
	// QuoteIndent is the margin on both sides of block quotes and
	// alerts; QuoteItalic sets quotes (not alerts) in italics.
	QuoteIndent float64 `json:"quoteIndent"`
	QuoteItalic bool    `json:"quoteItalic"`
	// QuoteFill is the ground of block quotes and alerts (empty: none),
	// and QuotePadding the space inside them above and below.
	QuoteFill    string  `json:"quoteFill"`
	QuotePadding float64 `json:"quotePadding"`
	// TableStripe is the ground of every second body row of a table
	// (empty: none).
	TableStripe string `json:"tableStripe"`
	// LinkPlain prints links in linkColor without an underline.
	LinkPlain bool `json:"linkPlain"`
	// HeadingItalic sets h1..h6 in italics, HeadingRegular at the text's
	// weight rather than bold, and HeadingMuted in mutedColor rather than
	// headingColor, level by level.
	HeadingItalic  [6]bool `json:"headingItalic"`
	HeadingRegular [6]bool `json:"headingRegular"`
	HeadingMuted   [6]bool `json:"headingMuted"`
	// StrikeMuted prints struck-through text in mutedColor.
	StrikeMuted bool `json:"strikeMuted"`
	// AlertPadding is the space inside an alert above and below (0: a
	// quote's, quotePadding).
	AlertPadding float64 `json:"alertPadding"`
	// ListItemSpacing is the space between one list item and the next
	// and above a list nested in an item (0: none).
	ListItemSpacing float64 `json:"listItemSpacing"`
	// CodeSize is the size of code as a multiple of the text around it
	// (em), CodeLineHeight a code block's line height as a multiple of
	// its code's size.
	CodeSize       float64 `json:"codeSize"`
	CodeLineHeight float64 `json:"codeLineHeight"`
	// HeadingSpacing is the space above a heading and below it in
	// paragraph gaps (paragraphSpacing), so that headings keep their
	// distance from the text as it changes; HeadingLineHeight is a
	// heading's line height as a multiple of its size.
	HeadingSpacing    [2]float64 `json:"headingSpacing"`
	HeadingLineHeight float64    `json:"headingLineHeight"`
	// FootnoteSize is the size of the footnotes' text as a multiple of
	// the body's (em).
	FootnoteSize float64 `json:"footnoteSize"`
}

// alertColors is stage.AlertColors with the JSON keys of a design file.
type alertColors struct {
	Note      string `json:"note"`
	Tip       string `json:"tip"`
	Important string `json:"important"`
	Warning   string `json:"warning"`
	Caution   string `json:"caution"`
}

// githubAlerts are GitHub's (light theme) colours of its alerts, which
// both built-in themes keep: a reader knows a warning by its amber.
var githubAlerts = alertColors{
	Note:      "#0969da",
	Tip:       "#1a7f37",
	Important: "#8250df",
	Warning:   "#9a6700",
	Caution:   "#d1242f",
}

// codePalette is stage.CodePalette with the JSON keys of a design file.
type codePalette struct {
	Comment  string `json:"comment"`
	Keyword  string `json:"keyword"`
	String   string `json:"string"`
	Constant string `json:"constant"`
	Entity   string `json:"entity"`
	Tag      string `json:"tag"`
	Variable string `json:"variable"`
	Inserted string `json:"inserted"`
	Deleted  string `json:"deleted"`
	Heading  string `json:"heading"`
}

// githubPalette is GitHub's light highlighting (its "prettylights"
// colours), for basic.
var githubPalette = codePalette{
	Comment:  "#59636e",
	Keyword:  "#cf222e",
	String:   "#0a3069",
	Constant: "#0550ae",
	Entity:   "#6639ba",
	Tag:      "#116329",
	Variable: "#953800",
	Inserted: "#116329",
	Deleted:  "#82071e",
	Heading:  "#0550ae",
}

// modernPalette keeps modern's slate and blue: the keywords in its
// headings' blue family (violet, to tell them from the entities' blue),
// strings in green, numbers in amber; comments in its muted slate.
var modernPalette = codePalette{
	Comment:  "#64748b",
	Keyword:  "#7c3aed",
	String:   "#047857",
	Constant: "#b45309",
	Entity:   "#1d4ed8",
	Tag:      "#be123c",
	Variable: "#c2410c",
	Inserted: "#15803d",
	Deleted:  "#b91c1c",
	Heading:  "#1d4ed8",
}

// modernDesign: sans-serif, dark slate text, blue headings over a rule,
// generous spacing.
var modernDesign = design{
	BodyFont:         "sans",
	HeadingFont:      "sans",
	FontSize:         10.5,
	LineHeight:       1.6,
	HeadingSizes:     [6]float64{24, 18.5, 15, 13, 11.5, 10.5},
	TextColor:        "#1e293b",
	HeadingColor:     "#1d4ed8",
	LinkColor:        "#2563eb",
	MutedColor:       "#64748b",
	RuleColor:        "#cbd5e1",
	CodeBackground:   "#f1f5f9",
	CodeColor:        "#0f172a",
	QuoteBar:         "#3b82f6",
	TableHeaderFill:  "#e2e8f0",
	AccentColor:      "#2563eb",
	ParagraphSpacing: 10,
	HeadingRule:      true,
	Margin:           54,
	MarginBottom:     62,
	PageNumberSize:   8.5,
	CodePalette:      modernPalette,
	AlertColors:      githubAlerts,
	// 0.85em and 1.1em of its code's 0.88em; the frame all round is
	// modern.css's own.
	CodePadding: [3]float64{7.85, 10.16, 10.16},
	// Quotes and alerts on its code's shade, a quote 0.35em inside it
	// above and below.
	QuoteFill:    "#f1f5f9",
	QuotePadding: 3.68,
	TableStripe:  "#f8fafc",
	LinkPlain:    true,
	// h6, the size of the text, tells itself from it by its grey.
	HeadingMuted: [6]bool{5: true},
	StrikeMuted:  true,
	// An alert 0.5em inside its shade, roomier than a quote.
	AlertPadding: 5.25,
	// List items 0.3em apart.
	ListItemSpacing: 3.15,
	CodeSize:        0.88,
	CodeLineHeight:  1.45,
	// Headings 2.2 paragraph gaps under the text before them, one over
	// the text after.
	HeadingSpacing:    [2]float64{2.2, 1},
	HeadingLineHeight: 1.25,
	FootnoteSize:      0.88,
}

// basicDesign: serif, black on white, plain, tighter, wide classic
// margins.
var basicDesign = design{
	BodyFont:         "serif",
	HeadingFont:      "serif",
	FontSize:         11.5,
	LineHeight:       1.35,
	HeadingSizes:     [6]float64{21, 16.5, 13.5, 12, 11.5, 11.5},
	TextColor:        "#000000",
	HeadingColor:     "#000000",
	LinkColor:        "#00008b",
	MutedColor:       "#444444",
	RuleColor:        "#000000",
	CodeBackground:   "#ffffff",
	CodeColor:        "#000000",
	QuoteBar:         "#808080",
	TableHeaderFill:  "#ffffff",
	AccentColor:      "#000000",
	ParagraphSpacing: 6,
	HeadingRule:      false,
	Margin:           72,
	MarginBottom:     72,
	PageNumberSize:   10,
	CodePalette:      githubPalette,
	AlertColors:      githubAlerts,
	// A code block is set in from the text by 1.5em of its 0.85em type,
	// behind a 1px rule and 0.2em above and below, 0.8em after the rule;
	// a quote by 1.5em of the text's on both sides, in italics.
	CodeIndent:  14.66,
	CodeRule:    0.75,
	CodePadding: [3]float64{1.96, 7.82, 0},
	QuoteIndent: 17.25,
	QuoteItalic: true,
	// h5 and h6, no bigger than the text, tell themselves from it by
	// italics, h6 by italics alone.
	HeadingItalic:  [6]bool{4: true, 5: true},
	HeadingRegular: [6]bool{5: true},
	CodeSize:       0.85,
	CodeLineHeight: 1.3,
	// Headings two paragraph gaps under the text before them, 0.8 of one
	// over the text after.
	HeadingSpacing:    [2]float64{2, 0.8},
	HeadingLineHeight: 1.2,
	FootnoteSize:      0.9,
}

var hexColor = regexp.MustCompile(`^#[0-9a-f]{6}$`)

// validate checks a design decoded from an operator's JSON; the error
// names the key.
func (d design) validate() error {
	for key, font := range map[string]string{"bodyFont": d.BodyFont, "headingFont": d.HeadingFont} {
		if font != "sans" && font != "serif" {
			return fmt.Errorf("%s must be \"sans\" or \"serif\", got %q", key, font)
		}
	}
	sizes := []struct {
		key      string
		v        float64
		min, max float64
	}{
		{"fontSize", d.FontSize, 4, 72},
		{"lineHeight", d.LineHeight, 0.8, 4},
		{"paragraphSpacing", d.ParagraphSpacing, 0, 144},
		{"margin", d.Margin, 0, 288},
		{"marginBottom", d.MarginBottom, 0, 288},
		{"pageNumberSize", d.PageNumberSize, 4, 72},
		{"codeIndent", d.CodeIndent, 0, 144},
		{"codeRule", d.CodeRule, 0, 12},
		{"quoteIndent", d.QuoteIndent, 0, 144},
		{"quotePadding", d.QuotePadding, 0, 144},
		{"alertPadding", d.AlertPadding, 0, 144},
		{"listItemSpacing", d.ListItemSpacing, 0, 144},
		{"codeSize", d.CodeSize, 0.3, 3},
		{"codeLineHeight", d.CodeLineHeight, 0.8, 4},
		{"headingSpacing[0]", d.HeadingSpacing[0], 0, 10},
		{"headingSpacing[1]", d.HeadingSpacing[1], 0, 10},
		{"headingLineHeight", d.HeadingLineHeight, 0.8, 4},
		{"footnoteSize", d.FootnoteSize, 0.3, 3},
	}
	for i, p := range d.CodePadding {
		sizes = append(sizes, struct {
			key      string
			v        float64
			min, max float64
		}{fmt.Sprintf("codePadding[%d]", i), p, 0, 144})
	}
	for i, h := range d.HeadingSizes {
		sizes = append(sizes, struct {
			key      string
			v        float64
			min, max float64
		}{fmt.Sprintf("headingSizes[%d]", i), h, 4, 144})
	}
	for _, s := range sizes {
		if math.IsNaN(s.v) || s.v < s.min || s.v > s.max {
			return fmt.Errorf("%s must be between %g and %g, got %g", s.key, s.min, s.max, s.v)
		}
	}
	colors := []struct{ key, v string }{
		{"textColor", d.TextColor}, {"headingColor", d.HeadingColor}, {"linkColor", d.LinkColor},
		{"mutedColor", d.MutedColor}, {"ruleColor", d.RuleColor}, {"codeBackground", d.CodeBackground},
		{"codeColor", d.CodeColor}, {"quoteBar", d.QuoteBar}, {"tableHeaderFill", d.TableHeaderFill},
		{"accentColor", d.AccentColor},
	}
	for _, c := range colors {
		if !hexColor.MatchString(c.v) {
			return fmt.Errorf("%s must be a lower-case #rrggbb colour, got %q", c.key, c.v)
		}
	}
	a := d.AlertColors
	for _, c := range []struct{ key, v string }{
		{"note", a.Note}, {"tip", a.Tip}, {"important", a.Important}, {"warning", a.Warning}, {"caution", a.Caution},
	} {
		if !hexColor.MatchString(c.v) {
			return fmt.Errorf("alertColors.%s must be a lower-case #rrggbb colour, got %q", c.key, c.v)
		}
	}
	for _, c := range []struct{ key, v string }{{"quoteFill", d.QuoteFill}, {"tableStripe", d.TableStripe}} {
		if c.v != "" && !hexColor.MatchString(c.v) {
			return fmt.Errorf("%s must be empty or a lower-case #rrggbb colour, got %q", c.key, c.v)
		}
	}
	p := stage.CodePalette(d.CodePalette)
	for _, class := range highlight.Classes {
		if v := highlight.Colour(p, class); v != "" && !hexColor.MatchString(v) {
			return fmt.Errorf("codePalette.%s must be empty or a lower-case #rrggbb colour, got %q", class, v)
		}
	}
	return nil
}

// a4Short is the short side of A4 in points: at and above it margins keep
// their design values. a6Short is the short side of A6: below it the type
// shrinks too, down to minTypeScale.
const (
	a4Short      = 210 * 72 / 25.4
	a6Short      = 105 * 72 / 25.4
	minTypeScale = 0.6
)

// scaled is a design fitted to one page: the tokens, plus what only the
// CSS needs.
type scaled struct {
	stage.Tokens
	PageNumberSize float64
}

// fit scales the design to the page. Every value is rounded to 0.01 pt so
// that the tokens and the CSS written from them are the same numbers.
func (d design) fit(name string, page stage.PageSize) scaled {
	short := math.Min(page.WidthPt, page.HeightPt)
	space := math.Min(1, short/a4Short)
	typ := math.Max(minTypeScale, math.Min(1, short/a6Short))
	t := stage.Tokens{
		Theme:            name,
		BodyFont:         d.BodyFont,
		HeadingFont:      d.HeadingFont,
		MonoFont:         "mono",
		FontSize:         round2(d.FontSize * typ),
		LineHeight:       d.LineHeight,
		TextColor:        d.TextColor,
		HeadingColor:     d.HeadingColor,
		LinkColor:        d.LinkColor,
		MutedColor:       d.MutedColor,
		RuleColor:        d.RuleColor,
		CodeBackground:   d.CodeBackground,
		CodeColor:        d.CodeColor,
		QuoteBar:         d.QuoteBar,
		TableHeaderFill:  d.TableHeaderFill,
		AccentColor:      d.AccentColor,
		ParagraphSpacing: round2(d.ParagraphSpacing * typ),
		HeadingRule:      d.HeadingRule,
		CodePalette:      stage.CodePalette(d.CodePalette),
		AlertColors:      stage.AlertColors(d.AlertColors),
		CodeIndent:       round2(d.CodeIndent * typ),
		// A rule is a hairline at any size, as the CSS's 1px is.
		CodeRule:    round2(d.CodeRule),
		QuoteIndent: round2(d.QuoteIndent * typ),
		QuoteItalic: d.QuoteItalic,
		QuoteFill:   d.QuoteFill,
		// The padding is the space's, as modern.css's em of the text.
		QuotePadding: round2(d.QuotePadding * typ),
		TableStripe:  d.TableStripe,
		LinkPlain:    d.LinkPlain,
		// Flags, not sizes: the same on every page.
		HeadingItalic:   d.HeadingItalic,
		HeadingRegular:  d.HeadingRegular,
		HeadingMuted:    d.HeadingMuted,
		StrikeMuted:     d.StrikeMuted,
		AlertPadding:    round2(d.AlertPadding * typ),
		ListItemSpacing: round2(d.ListItemSpacing * typ),
		// Multiples, the same on every page.
		CodeSize:          d.CodeSize,
		CodeLineHeight:    d.CodeLineHeight,
		HeadingLineHeight: d.HeadingLineHeight,
		FootnoteSize:      d.FootnoteSize,
	}
	for i, h := range d.HeadingSpacing {
		t.HeadingSpacing[i] = round2(h * d.ParagraphSpacing * typ)
	}
	for i, h := range d.HeadingSizes {
		t.HeadingSizes[i] = round2(h * typ)
	}
	for i, p := range d.CodePadding {
		t.CodePadding[i] = round2(p * typ)
	}
	number := round2(d.PageNumberSize * typ)
	side := round2(d.Margin * space)
	// The bottom margin holds the page number: at least twice its size.
	bottom := round2(math.Max(d.MarginBottom*space, 2*number))
	t.Margins = [4]float64{side, side, bottom, side}
	return scaled{Tokens: t, PageNumberSize: number}
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
