package markdown

import (
	"strings"
	"testing"
	"time"

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

// BenchmarkParseParts compares ParseParts with Parse (both without the
// HTML, as a tree renderer asks) on the corpus and the 10-page shape:
// ns/op is the whole parse, first-ns/op the time to the first part, when
// a renderer can start, and parts/op how many parts it came in.
func BenchmarkParseParts(b *testing.B) {
	type doc struct{ name, src string }
	docs := []doc{{"ten-pages", tenPages()}}
	for _, c := range corpus {
		docs = append(docs, doc{strings.TrimSuffix(c.file, ".md"), readCorpus(b, c.file)})
	}
	// The host's default body limit.
	medium := readCorpus(b, "medium.md")
	docs = append(docs, doc{"medium-10MiB", strings.Repeat(medium+"\n\n", (10<<20)/(len(medium)+2))})
	large := readCorpus(b, "large.md")
	docs = append(docs, doc{"large-10MiB", strings.Repeat(large+"\n\n", (10<<20)/(len(large)+2))})
	p := New(nil)
	for _, d := range docs {
		req := &stage.ParseRequest{Markdown: d.src, SkipHTML: true}
		b.Run(d.name+"/parse", func(b *testing.B) {
			b.SetBytes(int64(len(d.src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Parse(b.Context(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/parts", func(b *testing.B) {
			b.SetBytes(int64(len(d.src)))
			b.ReportAllocs()
			var first time.Duration
			parts := 0
			for b.Loop() {
				start, n := time.Now(), 0
				_, err := p.ParseParts(b.Context(), req, func(stage.Part) error {
					if n++; n == 1 {
						first += time.Since(start)
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				parts += n
			}
			b.ReportMetric(float64(first.Nanoseconds())/float64(b.N), "first-ns/op")
			b.ReportMetric(float64(parts)/float64(b.N), "parts/op")
		})
	}
}
