package plugin

import (
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestTokensCrossWhole sends tokens through their wire form and back: the
// alerts' colours reach a renderer, and tokens without them (an older
// styler's) arrive without them, for the renderer to draw its defaults.
func TestTokensCrossWhole(t *testing.T) {
	for _, tc := range []stage.Tokens{
		{Theme: "basic", AlertColors: stage.AlertColors{Note: "#111111", Tip: "#222222", Important: "#333333", Warning: "#444444", Caution: "#555555"}},
		{Theme: "modern", AlertColors: stage.AlertColors{Warning: "#ff0000"}, CodePalette: stage.CodePalette{Keyword: "#00ff00"}},
		{Theme: "old"},
	} {
		pb := tokensToPB(tc)
		if (tc.AlertColors == stage.AlertColors{}) != (pb.GetAlertColors() == nil) {
			t.Errorf("%s: alert colours on the wire %v for %+v", tc.Theme, pb.GetAlertColors(), tc.AlertColors)
		}
		if got := tokensFromPB(pb); got != tc {
			t.Errorf("%s: got %+v, want %+v", tc.Theme, got, tc)
		}
	}
}
