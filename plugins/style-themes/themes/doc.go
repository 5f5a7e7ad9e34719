// Package themes is the style stage: it turns a parsed document into a
// complete HTML document for a CSS renderer, and into stage.Tokens for a
// renderer that does not read CSS. Two themes are built in: "modern"
// (sans-serif, slate text, blue headings with a rule, roomy, shaded code,
// zebra tables) and "basic" (serif, black on white, plain, tighter).
//
// A theme is a design (its tokens: fonts, sizes, colours, spacing,
// margins) plus a stylesheet. The styler writes the tokens, scaled to the
// page, as CSS custom properties (--md-text, --md-h1, ...) in front of the
// stylesheet, and the stylesheet reads them; so the CSS and the tokens
// cannot drift apart.
//
// The document's CSS comes in this order: the theme inside the cascade
// layer "mdpress-theme" (after rules every theme gets: a <details> prints
// open), the page rules (@page size and margins, page
// number margin boxes), then every <style> element of the body, moved to
// the end of <head> in the order the author wrote them. User CSS thus wins
// twice over: it comes last, and unlayered rules beat layered ones
// whatever their specificity. The styler draws no watermark: in the same
// page as the document's CSS it could be hidden, so the renderer draws it
// (render-chrome stamps it into the printed PDF).
//
// Config block (JSON, every key optional):
//
//	{"themesDir": "/etc/mdpress/themes"}
//
// themesDir holds operator themes: <name>.css, <name>.json with the
// design, or both. The API's theme field takes "basic" and "modern" only
// (the public contract), so an operator theme is named after the built-in
// one it replaces: its stylesheet when the CSS is there, its design when
// the JSON is there; a JSON alone restyles the built-in stylesheet, which
// reads every token. Any other name is a config error, as no request
// could ask for it. The
// JSON starts from a built-in design, "base" (the replaced theme's unless
// said otherwise), and overrides what it names:
//
//	{"base": "basic", "bodyFont": "sans", "headingFont": "sans", "fontSize": 11, "lineHeight": 1.5,
//	 "headingSizes": [22, 17, 14, 12, 11, 11], "textColor": "#222222",
//	 "headingColor": "#7b1fa2", "linkColor": "#7b1fa2", "mutedColor": "#666666",
//	 "ruleColor": "#dddddd", "codeBackground": "#f6f6f6", "codeColor": "#222222",
//	 "quoteBar": "#7b1fa2", "tableHeaderFill": "#eeeeee", "accentColor": "#7b1fa2",
//	 "paragraphSpacing": 8, "headingRule": true, "margin": 54, "marginBottom": 60,
//	 "pageNumberSize": 9,
//	 "codePalette": {"comment": "#6a737d", "keyword": "#d73a49", "string": "#032f62",
//	   "constant": "#005cc5", "entity": "#6f42c1", "tag": "#22863a", "variable": "#e36209",
//	   "inserted": "#22863a", "deleted": "#b31d28", "heading": "#005cc5"},
//	 "alertColors": {"note": "#0969da", "tip": "#1a7f37", "important": "#8250df",
//	   "warning": "#9a6700", "caution": "#d1242f"},
//	 "codeIndent": 14.66, "codeRule": 0.75, "codePadding": [1.96, 7.82, 0],
//	 "quoteIndent": 17.25, "quoteItalic": true, "quoteFill": "#f6f6f6", "quotePadding": 4,
//	 "alertPadding": 6, "listItemSpacing": 3,
//	 "tableStripe": "#fafafa", "linkPlain": false,
//	 "headingItalic": [false, false, false, false, true, true],
//	 "headingRegular": [false, false, false, false, false, true],
//	 "headingMuted": [false, false, false, false, false, false], "strikeMuted": false,
//	 "codeSize": 0.85, "codeLineHeight": 1.3, "headingSpacing": [2, 0.8], "headingLineHeight": 1.2,
//	 "footnoteSize": 0.9}
//
// codePalette colours the tokens of a fenced code block that names its
// language (```go): constant also colours numbers, built-ins and
// attribute names, entity the names a declaration introduces, inserted,
// deleted and heading a diff's lines; a class set to "" is codeColor. The
// styler wraps the block's tokens in <span class="hl-<class>"> and writes
// the palette inside the theme's layer, so a stylesheet can restyle the
// spans; render-fpdf draws the same palette from the tokens.
//
// codeIndent sets a code block in from the text on the side its lines
// start from, codeRule draws a rule of that width in ruleColor down that
// side (0: none), and codePadding is the space inside the block: above and
// below, on the start side, on the other side. quoteIndent sets block
// quotes and alerts in from the text on both sides, and quoteItalic sets
// quotes (not alerts) in italics; quoteFill is the ground of quotes and
// alerts ("" for none) and quotePadding the space inside a quote above its
// first line and below its last, alertPadding an alert's (0: a quote's);
// tableStripe is the ground of a table's second, fourth (and so on) body
// row ("" for none), and linkPlain prints links without an underline.
// listItemSpacing is the space between one list item and the next and
// above a list nested in an item (0: none). headingItalic, headingRegular
// and headingMuted set h1..h6, level by level, in italics, at the text's
// weight rather than bold, and in mutedColor rather than headingColor;
// strikeMuted prints struck-through text in mutedColor. render-fpdf draws
// them from the tokens.
//
// codeSize is the size of code, in a block and in a line of text (a
// heading's, a table's, a footnote's), as a multiple of the text around it,
// CSS's em; codeLineHeight a code block's line height as a multiple of
// its code's size. headingSpacing is the space above a heading and below
// it in paragraph gaps (paragraphSpacing), not points, so that headings
// keep their distance from the text when paragraphSpacing changes;
// headingLineHeight is a heading's line height as a multiple of its size.
// footnoteSize is the size of the footnotes' text as a multiple of the
// body's.
//
// alertColors colour the bar and title of each kind of GitHub alert
// (> [!NOTE] ...), GitHub's in both built-in themes; a key left out keeps
// the base's colour. The styler writes them as the alert's --md-alert,
// and render-fpdf draws the same colours from the tokens.
//
// Other sizes are points on an A4 page; smaller pages scale margins down
// with their short side, and pages smaller than A6 scale the type down too
// (to 60% at most), headingSpacing with paragraphSpacing, so even A9 keeps
// a usable text area. Theme names are
// lower-case letters, digits, "-" and "_". A stylesheet must not use
// @import: it is wrapped in a cascade layer, and the renderer fetches
// nothing remote anyway.
package themes
