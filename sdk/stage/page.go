package stage

// PageSize is a page's name and portrait-or-defined dimensions in
// PostScript points (1/72 in). The table of sizes lives in core/papers.
type PageSize struct {
	Name     string
	WidthPt  float64
	HeightPt float64
}

// Numbering says where page numbers go at the bottom of each page.
type Numbering string

const (
	NumberingNone   Numbering = "none"
	NumberingLeft   Numbering = "left"
	NumberingCenter Numbering = "center"
	NumberingRight  Numbering = "right"
)

// Tokens are a theme's values for backends that do not apply CSS. Sizes are
// in points; colours are #rrggbb.
type Tokens struct {
	Theme string

	BodyFont    string  // "sans" or "serif"
	HeadingFont string  // "sans" or "serif"
	MonoFont    string  // "mono"
	FontSize    float64 // body size
	LineHeight  float64 // multiple of FontSize
	// HeadingSizes are h1..h6.
	HeadingSizes [6]float64

	TextColor       string
	HeadingColor    string
	LinkColor       string
	MutedColor      string // block quote text, footnotes
	RuleColor       string // thematic breaks, heading underlines, table borders
	CodeBackground  string
	CodeColor       string
	QuoteBar        string
	TableHeaderFill string
	AccentColor     string // e.g. h1/h2 underline

	// Margins of the page box: top, right, bottom, left.
	Margins [4]float64
	// ParagraphSpacing is space after a block, in points.
	ParagraphSpacing float64
	// HeadingRule draws a rule under h1 and h2.
	HeadingRule bool
	// CodePalette colours the tokens of a fenced code block that names
	// its language. The zero palette draws code in CodeColor alone.
	CodePalette CodePalette
	// AlertColors colour the bar and title of GitHub's alerts
	// (> [!NOTE] ...). The zero value draws GitHub's colours.
	AlertColors AlertColors

	// CodeIndent is the space before a code block on the side its lines
	// start from. Zero: flush with the text.
	CodeIndent float64
	// CodeRule is the width of a rule in RuleColor down that side of a
	// code block. Zero: none.
	CodeRule float64
	// CodePadding is the space inside a code block: above and below, on
	// the side its lines start from, on the other side. All zero: the
	// renderer's own, the same all round.
	CodePadding [3]float64
	// QuoteIndent is the space on both sides of a block quote and of an
	// alert. Zero: flush with the text.
	QuoteIndent float64
	// QuoteItalic sets a block quote's text in italics (not an alert's).
	QuoteItalic bool
	// QuoteFill is the ground of a block quote and of an alert, under
	// their bar too. Empty: none.
	QuoteFill string
	// QuotePadding is the space inside a block quote and an alert above
	// their first line and below their last. Zero: none.
	QuotePadding float64
	// TableStripe is the ground of every second body row of a table, the
	// second, fourth and so on. Empty: none.
	TableStripe string
	// LinkPlain draws links in LinkColor without an underline. False:
	// underlined.
	LinkPlain bool
	// HeadingItalic sets h1..h6 in italics, HeadingRegular at the text's
	// weight rather than bold, and HeadingMuted in MutedColor rather than
	// HeadingColor. All false: bold, upright, in HeadingColor.
	HeadingItalic  [6]bool
	HeadingRegular [6]bool
	HeadingMuted   [6]bool
	// StrikeMuted draws struck-through text, and its line, in MutedColor.
	// False: in the colour of the text around it.
	StrikeMuted bool
	// AlertPadding is the space inside an alert above its first line and
	// below its last. Zero: QuotePadding, as a quote's.
	AlertPadding float64
	// ListItemSpacing is the space between one list item and the next,
	// and above a list nested in an item, as CSS's li + li and li > ul
	// margins: the larger of it and the margin of the block that ends
	// the item before counts. Zero: none.
	ListItemSpacing float64
	// CodeSize is the size of code, in a block and in a line of text, as
	// a multiple of the size of the text around it (CSS's em). Zero: 0.9.
	CodeSize float64
	// CodeLineHeight is the height of a code block's line as a multiple
	// of its code's size. Zero: 1.35.
	CodeLineHeight float64
	// HeadingSpacing is the space above a heading and below it, margins
	// that collapse with those of the blocks beside it. Zero: the
	// renderer's own.
	HeadingSpacing [2]float64
	// HeadingLineHeight is the height of a heading's line as a multiple
	// of its size. Zero: LineHeight.
	HeadingLineHeight float64
	// FootnoteSize is the size of the footnotes' text as a multiple of
	// the body's (CSS's em). Zero: 0.85.
	FootnoteSize float64
}

// AlertColors is a colour (#rrggbb) per kind of GitHub alert; an empty
// colour is GitHub's for that kind.
type AlertColors struct {
	Note      string
	Tip       string
	Important string
	Warning   string
	Caution   string
}

// CodePalette is a colour (#rrggbb) per class of code token, the classes
// a syntax highlighter sorts tokens into; an empty colour is CodeColor.
type CodePalette struct {
	Comment  string
	Keyword  string
	String   string // string and character literals
	Constant string // numbers, true/false/nil, built-ins, attributes
	Entity   string // the names a declaration introduces: functions, types, classes
	Tag      string // markup tags
	Variable string
	Inserted string // a diff's added lines
	Deleted  string // a diff's removed lines
	Heading  string // a diff's file and hunk headers, a document's headings
}
