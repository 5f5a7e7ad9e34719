package themes

import (
	"testing"

	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

func TestConformance(t *testing.T) {
	t.Run("lifecycle", func(t *testing.T) { plugintest.Lifecycle(t, New(nil)) })
	t.Run("in process", func(t *testing.T) { plugintest.Styler(t, New(nil), plugintest.Config{}) })

	// The binary the host launches, over real go-plugin gRPC: the document
	// and the tokens must arrive as the styler made them.
	t.Run("binary", func(t *testing.T) {
		if testing.Short() {
			t.Skip("builds the plugin binary; skipped in -short mode")
		}
		bin := plugintest.Build(t, "github.com/mdpress/mdpress/plugins/style-themes")
		c := plugintest.Launch(t, bin, stage.NameStyle, plugintest.Config{})
		plugintest.Styler(t, c, plugintest.Config{Configured: true})

		req := &stage.StyleRequest{Document: plugintest.SampleDocument(), Theme: "basic", Page: mustPage(t, "Folio"), Numbering: stage.NumberingRight, Watermark: "W"}
		want, err := New(nil).Style(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Style(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if got.HTML != want.HTML || got.Tokens != want.Tokens {
			t.Error("the styled document or the tokens changed on the way through gRPC")
		}
		if _, err := c.Style(t.Context(), &stage.StyleRequest{Theme: "nope", Page: req.Page}); stage.CodeOf(err) != stage.CodeInvalid {
			t.Errorf("unknown theme over gRPC: %v, want CodeInvalid", err)
		}
	})
}
