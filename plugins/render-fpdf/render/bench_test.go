package render

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
	"github.com/mdpress/mdpress/plugins/render-fpdf/layout"
	"github.com/mdpress/mdpress/plugins/render-fpdf/paint"
	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

// section is about one A4 page of mixed content: headings, paragraphs with
// inline styles and links, a list, a code block and a small table.
func section(i int) string {
	return fmt.Sprintf(`## Section %d: a heading

Paragraph with **bold**, *italic*, `+"`code`"+` and a [link](https://example.com/%d). The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. How vexingly quick daft zebras jump, and the five boxing wizards jump quickly.

- first item of the list, long enough to wrap onto a second line when the column is narrow
- second item
  - nested item

`+"```go\nfunc f%d(x int) int {\n\tif x < 2 {\n\t\treturn x\n\t}\n\treturn f(x-1) + f(x-2)\n}\n```"+`

| Name | Value | Note |
|------|------:|------|
| alpha | %d | the first row |
| beta | %d.5 | the second row of the table |

> A quotation to close the section, with a little emphasis *here* and Ελληνικά, Кириллица.

Sphinx of black quartz, judge my vow. Jackdaws love my big sphinx of quartz. The job requires extra pluck and zeal from every young wage earner. A quick movement of the enemy will jeopardize six gunboats.

`, i, i, i, i, i)
}

// benchDoc builds a document of about pages A4 pages.
func benchDoc(b testing.TB, r *Renderer, pages int) stage.Document {
	b.Helper()
	build := func(n int) stage.Document {
		var s strings.Builder
		s.WriteString("# Benchmark document\n\n")
		for i := range n {
			s.WriteString(section(i))
		}
		return markdownDoc(b, s.String())
	}
	// Calibrate sections per page on ten sections; small documents are
	// trimmed until they fit the page count exactly.
	probe := renderPDF(b, r, req{doc: build(10), tokens: modernTokens})
	n := max(1, int(float64(pages)*10/float64(probe.Pages)+0.5))
	for pages <= 100 && n > 1 && renderPDF(b, r, req{doc: build(n), tokens: modernTokens}).Pages > pages {
		n--
	}
	return build(n)
}

// tinyDoc is the smallest document a client sends: a heading and one line
// in three faces. Its render is almost all fixed cost per document.
const tinyDoc = "# Report\n\nOne page of text for the benchmark, with **bold** and `code`.\n"

// BenchmarkRender measures whole renders of a tiny document and of 1 to
// 1,000 pages; cost should grow linearly past the tiny document's. Run it
// with
//
//	go test -run '^$' -bench 'Render/' -benchmem ./plugins/render-fpdf/render/
func BenchmarkRender(b *testing.B) {
	r := newRenderer(b, `{}`)
	for _, pages := range []int{0, 1, 10, 100, 1000} {
		name, d := "pages=tiny", stage.Document{}
		if pages == 0 {
			d = markdownDoc(b, tinyDoc)
		} else {
			name, d = fmt.Sprintf("pages=%d", pages), benchDoc(b, r, pages)
		}
		b.Run(name, func(b *testing.B) {
			page, _ := papers.Lookup("A4")
			q := &stage.RenderRequest{Document: d, Tokens: modernTokens, Page: page, Numbering: stage.NumberingCenter}
			var got, peak, size int
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				stop := plugintest.SamplePeakHeap(&peak)
				resp, err := r.Render(context.Background(), q)
				stop()
				if err != nil {
					b.Fatal(err)
				}
				got, size = resp.Pages, len(resp.PDF)
			}
			// The process's CPU time, GC included, is less disturbed than
			// wall time when other work shares the machine.
			cpuSec := (cpuTime() - cpu).Seconds()
			b.ReportMetric(float64(got), "pages/op")
			b.ReportMetric(float64(got)*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
			b.ReportMetric(cpuSec*1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(got)*float64(b.N)/cpuSec, "pages/cpu-s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(size)/(1<<20), "pdf-MiB")
		})
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFonts compares a one-page document rendered with the fonts
// parsed once per process ("cached": per-document copies as simple fonts)
// against the naive program that hands fpdf the whole font files as UTF-8
// fonts, which it parses for every document ("naive"). "load" is
// the one-time cost per process that "cached" pays instead. Run it with
//
//	go test -run '^$' -bench Fonts -benchmem ./plugins/render-fpdf/render/
func BenchmarkFonts(b *testing.B) {
	r := newRenderer(b, `{}`)
	d := benchDoc(b, r, 1)
	set, err := testFonts()
	if err != nil {
		b.Fatal(err)
	}
	page, _ := papers.Lookup("A4")
	render := func(b *testing.B, full bool) {
		doc, err := layout.Layout(context.Background(), d.Root, layout.Options{Page: page, Tokens: modernTokens, Fonts: set})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := paint.Paint(context.Background(), doc, paint.Options{Fonts: set, Numbering: stage.NumberingCenter, Compress: true, FullFonts: full}); err != nil {
			b.Fatal(err)
		}
	}
	measure := func(b *testing.B, fn func()) {
		b.ReportAllocs()
		cpu := cpuTime()
		for b.Loop() {
			fn()
		}
		b.ReportMetric((cpuTime()-cpu).Seconds()*1000/float64(b.N), "cpu-ms/op")
	}
	b.Run("cached", func(b *testing.B) { measure(b, func() { render(b, false) }) })
	b.Run("naive", func(b *testing.B) { measure(b, func() { render(b, true) }) })
	b.Run("load", func(b *testing.B) {
		measure(b, func() {
			if _, err := fonts.Load(); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkRenderParts renders the ten-page document from its tree in
// five parts (RenderParts, as the host streams a parse into it) and whole
// (Render): laying out part by part must cost what the whole tree does, so
// that the overlap with the parse is a gain. Run it with
//
//	go test -run '^$' -bench RenderParts -benchmem -count 6 ./plugins/render-fpdf/render/
func BenchmarkRenderParts(b *testing.B) {
	r := newRenderer(b, `{}`)
	d := benchDoc(b, r, 10)
	page, _ := papers.Lookup("A4")
	whole := &stage.RenderRequest{Document: d, Tokens: modernTokens, Page: page, Numbering: stage.NumberingCenter}
	inParts := *whole
	inParts.Document = stage.Document{}
	ns := d.Root.Children
	var split [][]*stage.Node
	for i := range 5 {
		split = append(split, ns[i*len(ns)/5:(i+1)*len(ns)/5])
	}
	measure := func(b *testing.B, render func() (*stage.RenderResponse, error)) {
		var got int
		b.ReportAllocs()
		cpu := cpuTime()
		for b.Loop() {
			resp, err := render()
			if err != nil {
				b.Fatal(err)
			}
			got = resp.Pages
		}
		b.ReportMetric(float64(got), "pages/op")
		b.ReportMetric((cpuTime()-cpu).Seconds()*1000/float64(b.N), "cpu-ms/op")
	}
	b.Run("whole", func(b *testing.B) {
		measure(b, func() (*stage.RenderResponse, error) { return r.Render(context.Background(), whole) })
	})
	b.Run("parts=5", func(b *testing.B) {
		measure(b, func() (*stage.RenderResponse, error) {
			return r.RenderParts(context.Background(), &inParts, partsOf(d, split))
		})
	})
}
