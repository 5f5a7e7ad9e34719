package markdown

import (
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// BenchmarkParse parses the corpus files: go test -bench Parse -benchmem.
func BenchmarkParse(b *testing.B) {
	p := New(nil)
	for _, c := range corpus {
		src := readCorpus(b, c.file)
		b.Run(strings.TrimSuffix(c.file, ".md"), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Parse(b.Context(), &stage.ParseRequest{Markdown: src}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseDeep parses hostile nesting of about 1 MiB; the figures
// should stay in the range of BenchmarkParse per byte.
func BenchmarkParseDeep(b *testing.B) {
	const size = 1 << 20
	inputs := map[string]string{
		"quotes":   strings.Repeat(">", size) + " x",
		"bullets":  strings.Repeat("- ", size/2) + "x",
		"lines":    strings.Repeat(strings.Repeat("> ", 100)+"x\n", size/202),
		"emphasis": strings.Repeat("*", size/2) + "x" + strings.Repeat("*", size/2),
	}
	p := New(nil)
	for _, name := range []string{"quotes", "bullets", "lines", "emphasis"} {
		src := inputs[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := p.Parse(b.Context(), &stage.ParseRequest{Markdown: src}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMeasure runs the budget's pre-scan alone over the corpus
// repeated to the host's default body limit: it runs on every request.
func BenchmarkMeasure(b *testing.B) {
	for _, c := range corpus {
		doc := readCorpus(b, c.file)
		src := []byte(strings.Repeat(doc+"\n\n", (10<<20)/(len(doc)+2)))
		b.Run(strings.TrimSuffix(c.file, ".md"), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				measure(src)
			}
		})
	}
}
