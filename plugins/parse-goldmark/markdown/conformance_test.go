package markdown

import (
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

func TestConformance(t *testing.T) {
	t.Run("lifecycle", func(t *testing.T) { plugintest.Lifecycle(t, New(nil)) })
	t.Run("in process", func(t *testing.T) {
		plugintest.Parser(t, New(nil), plugintest.Config{})
	})

	// The binary the host launches, over real go-plugin gRPC: the tree of a
	// real document and of hostile nesting must arrive whole.
	t.Run("binary", func(t *testing.T) {
		if testing.Short() {
			t.Skip("builds the plugin binary; skipped in -short mode")
		}
		bin := plugintest.Build(t, "github.com/mdpress/mdpress/plugins/parse-goldmark")
		c := plugintest.Launch(t, bin, stage.NameParse, plugintest.Config{})
		t.Run("kit", func(t *testing.T) {
			plugintest.Parser(t, c, plugintest.Config{Configured: true})
		})

		local := New(nil)
		for name, src := range map[string]string{
			"large.md":       readCorpus(t, "large.md"),
			"deep nesting":   strings.Repeat("> - ", 5000) + "*" + strings.Repeat("**", 3000) + "deep" + strings.Repeat("**", 3000) + "*",
			"gfm constructs": readFile(t, "testdata/gfm.md"),
		} {
			want, err := local.Parse(t.Context(), &stage.ParseRequest{Markdown: src})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Parse(t.Context(), &stage.ParseRequest{Markdown: src})
			if err != nil {
				t.Fatalf("%s over gRPC: %v", name, err)
			}
			if dump(got.Document) != dump(want.Document) {
				t.Errorf("%s: the document changed on the way through gRPC", name)
			}
		}
	})
}
