package themes

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/mdpress/mdpress/sdk/stage"
)

// corpusHTML renders a corpus file (testdata/corpus, see SOURCES.md there)
// to an HTML body with goldmark, as the parse stage would.
func corpusHTML(b *testing.B, file string) string {
	b.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "corpus", file))
	if err != nil {
		b.Fatal(err)
	}
	md := goldmark.New(goldmark.WithExtensions(extension.GFM, extension.Footnote), goldmark.WithRendererOptions(html.WithUnsafe()))
	var out bytes.Buffer
	if err := md.Convert(src, &out); err != nil {
		b.Fatal(err)
	}
	return out.String()
}

// BenchmarkStyle styles the corpus: go test -bench Style -benchmem.
func BenchmarkStyle(b *testing.B) {
	s := New(nil)
	page := mustPage(b, "A4")
	for _, name := range []string{"small", "medium", "large"} {
		body := corpusHTML(b, name+".md")
		b.Run(name, func(b *testing.B) {
			req := &stage.StyleRequest{Document: stage.Document{HTML: body, Title: name}, Theme: "modern", Page: page, Numbering: stage.NumberingCenter, Watermark: "FREE"}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Style(b.Context(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
