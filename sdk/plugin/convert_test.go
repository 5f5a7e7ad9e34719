package plugin

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/mdpress/mdpress/sdk/internal/pb"
	"github.com/mdpress/mdpress/sdk/stage"
)

// TestTokensCrossWhole sends tokens through their wire form and back: the
// alerts' colours and the block styles (code blocks' indent, rule and
// padding, quotes' indent, italics, fill and padding, alerts' padding,
// lists' item spacing, code's size and line height, headings' spacing and
// line height, footnotes' size, tables' stripes, links' underline,
// headings' italics, weight and colour, struck text's colour) reach a
// renderer, and
// tokens without them (an older styler's) arrive without them, for the
// renderer to draw its defaults.
func TestTokensCrossWhole(t *testing.T) {
	for _, tc := range []stage.Tokens{
		{Theme: "basic", AlertColors: stage.AlertColors{Note: "#111111", Tip: "#222222", Important: "#333333", Warning: "#444444", Caution: "#555555"}},
		{Theme: "modern", AlertColors: stage.AlertColors{Warning: "#ff0000"}, CodePalette: stage.CodePalette{Keyword: "#00ff00"}},
		{Theme: "basic-blocks", CodeIndent: 14.66, CodeRule: 0.75, CodePadding: [3]float64{1.96, 7.82, 0}, QuoteIndent: 17.25, QuoteItalic: true},
		{Theme: "padded", CodePadding: [3]float64{0, 0, 3}},
		{Theme: "basic-code", CodeSize: 0.85, CodeLineHeight: 1.3},
		{Theme: "basic-headings-spaced", HeadingSpacing: [2]float64{12, 4.8}, HeadingLineHeight: 1.2},
		{Theme: "modern-footnotes", FootnoteSize: 0.88},
		{Theme: "spaced-under", HeadingSpacing: [2]float64{0, 3}},
		{Theme: "modern-quotes", QuoteFill: "#f1f5f9", QuotePadding: 3.68, TableStripe: "#f8fafc", LinkPlain: true, StrikeMuted: true, AlertPadding: 5.25, ListItemSpacing: 3.15},
		{Theme: "basic-headings", HeadingItalic: [6]bool{4: true, 5: true}, HeadingRegular: [6]bool{5: true}, HeadingMuted: [6]bool{5: true}},
		{Theme: "old"},
	} {
		raw, err := proto.Marshal(tokensToPB(tc))
		if err != nil {
			t.Fatal(err)
		}
		wire := &pb.Tokens{}
		if err := proto.Unmarshal(raw, wire); err != nil {
			t.Fatal(err)
		}
		if (tc.AlertColors == stage.AlertColors{}) != (wire.GetAlertColors() == nil) {
			t.Errorf("%s: alert colours on the wire %v for %+v", tc.Theme, wire.GetAlertColors(), tc.AlertColors)
		}
		if (tc.CodePadding == [3]float64{}) != (wire.GetCodePadding() == nil) {
			t.Errorf("%s: code padding on the wire %v for %v", tc.Theme, wire.GetCodePadding(), tc.CodePadding)
		}
		if (tc.HeadingSpacing == [2]float64{}) != (wire.GetHeadingSpacing() == nil) {
			t.Errorf("%s: heading spacing on the wire %v for %v", tc.Theme, wire.GetHeadingSpacing(), tc.HeadingSpacing)
		}
		if got := tokensFromPB(wire); got != tc {
			t.Errorf("%s: got %+v, want %+v", tc.Theme, got, tc)
		}
	}
}
