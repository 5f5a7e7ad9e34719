package render

import (
	"context"
	"os"
	"testing"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/sdk/stage"
)

func TestSmokeWrite(t *testing.T) {
	dir := os.Getenv("SMOKE_DIR")
	if dir == "" {
		t.Skip("SMOKE_DIR not set")
	}
	r := New(nil)
	for _, name := range []string{"gfm", "small", "medium", "large"} {
		src, err := os.ReadFile("testdata/" + name + ".md")
		if err != nil {
			t.Fatal(err)
		}
		for tn, tok := range map[string]stage.Tokens{"modern": modernTokens, "basic": basicTokens} {
			a4, _ := papers.Lookup("A4")
			resp, err := r.Render(context.Background(), &stage.RenderRequest{Document: markdownDoc(t, string(src)), Tokens: tok, Page: a4, Numbering: stage.NumberingCenter, Watermark: os.Getenv("SMOKE_WM")})
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(dir+"/"+name+"-"+tn+".pdf", resp.PDF, 0o644)
			t.Logf("%s %s: %d pages %d bytes", name, tn, resp.Pages, len(resp.PDF))
		}
	}
}
