// Package layout turns the parser's document tree into a display list: pages
// of positioned text runs, rectangles, lines, images and link areas, plus the
// anchors, outline and per-face character sets a painter needs. It knows
// nothing of PDF; it measures text with the same metrics fpdf draws with, so
// what it places is what the painter draws.
//
// Coordinates are PostScript points from the page's top-left corner, y down.
package layout

import "github.com/mdpress/mdpress/plugins/render-fpdf/fonts"

// Doc is a laid-out document.
type Doc struct {
	Width, Height float64
	// Content is the box text is laid out in; page furniture (numbers) goes
	// in the margins around it.
	Content Box
	Pages   []*Page
	// Used lists, per face, the characters drawn with it; nil for faces the
	// document does not use. The painter embeds exactly these.
	Used [fonts.MaxFaces]*fonts.Runes
	// Actual lists, for the Text items whose Actual field points here,
	// the parts of their text that stand for other characters, for the
	// painter to mark with those (see unshape.go).
	Actual [][]ActualText
	// Images are the decoded images that Image items refer to by index.
	Images []Image
	// Anchors are link targets by name: heading ids, HTML anchors, footnotes.
	Anchors map[string]Dest
	// Outline lists the headings for bookmarks, levels normalized so that
	// each is at most one deeper than the one before it (0 is top).
	Outline []Mark
	// Body is the face and colour page furniture is drawn with.
	Body      fonts.ID
	BodySize  float64
	Muted     RGB
	TextColor RGB
}

// Box is a rectangle.
type Box struct{ X0, Y0, X1, Y1 float64 }

// Page holds a page's items in drawing order.
type Page struct {
	Items []Item
}

// Kind says what an Item draws.
type Kind uint8

const (
	// Text draws Text with Face and Size in Color; X, Y is the baseline origin.
	Text Kind = iota
	// Fill fills the rectangle X, Y, W, H with Color.
	Fill
	// Stroke outlines the rectangle X, Y, W, H with Color at LineWidth.
	Stroke
	// Line draws from X, Y to X2, Y2 with Color at LineWidth.
	Line
	// ImageBox draws Images[Image] into X, Y, W, H. An emoji's box also
	// has its characters in Text, to be extracted as if drawn with Face at
	// Size from the pen at X2 on the baseline Y2 over the advance
	// LineWidth.
	ImageBox
	// LinkURI makes X, Y, W, H a link to the URI in Text.
	LinkURI
	// LinkAnchor makes X, Y, W, H a link to the anchor named in Text.
	LinkAnchor
	// MathBegin opens a formula, drawn by the items up to the next
	// MathEnd: Text is what a reader extracts for it (its TeX source),
	// and the text extraction anchors to is drawn invisibly with Face at
	// Size from the pen at X on the baseline Y over the advance W.
	MathBegin
	// MathEnd closes the formula MathBegin opened, with the same fields.
	MathEnd
)

// Item is one display-list entry. A flat struct rather than an interface
// keeps a thousand-page list compact and free of per-item allocations.
type Item struct {
	Kind Kind
	// Synth is what a Text item's style asks for that its face lacks, for
	// the painter to make up. It sits in Kind's padding.
	Synth Synthetic
	// Actual is, for a Text item, 1 + the index in Doc.Actual of the
	// parts of its text that stand for other characters, or 0. It sits
	// in Kind's padding too.
	Actual     uint32
	Face       fonts.ID
	Image      int
	X, Y, W, H float64
	X2, Y2     float64
	Size       float64
	LineWidth  float64
	Color      RGB
	Text       string
}

// ActualText is a part of a Text item's text, bytes Start to End, that
// stands for other characters, Actual of it: Arabic is drawn in
// presentation forms, and the brackets of right-to-left text, Reversed
// for display, mirrored.
type ActualText struct {
	Start, End int
	Reversed   bool
}

// Synthetic lists the styles a run of text asks for that the face drawing
// it does not have: a fallback font (CJK) has one face, so bold and
// italic text in it would come out regular, where Chromium synthesizes
// them.
type Synthetic uint8

const (
	SynthBold Synthetic = 1 << iota
	SynthOblique
)

// Dest is a position in the document.
type Dest struct {
	Page int // 0-based
	Y    float64
}

// Mark is an outline entry.
type Mark struct {
	Level int
	Text  string
	Dest
}

// ImageType is how image bytes are encoded, named as fpdf names them.
type ImageType string

const (
	PNG  ImageType = "PNG"
	JPEG ImageType = "JPG"
	GIF  ImageType = "GIF"
)

// Image is a decoded, validated image.
type Image struct {
	Type          ImageType
	Data          []byte
	Width, Height int // pixels
}

// RGB is a colour.
type RGB struct{ R, G, B uint8 }
