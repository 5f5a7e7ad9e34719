package render

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/plugins/render-fpdf/layout"
	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

// needEmojiFont skips a test on a machine without Noto Color Emoji
// (Debian's fonts-noto-color-emoji, which CI installs).
func needEmojiFont(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(SystemEmoji); err != nil {
		t.Skipf("no colour emoji font: %v", err)
	}
}

// emojiRenderer is a configured renderer that draws emoji from font ("":
// none).
func emojiRenderer(t testing.TB, font string) *Renderer {
	t.Helper()
	r := New(nil, WithFonts(mustFonts(t)), WithSystemFallbacks(), WithEmojiFont(font),
		WithClock(func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }))
	if _, err := r.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	return r
}

// colour is a colour the test looks for, and its tolerance per channel.
type colour struct{ r, g, b, tol byte }

var (
	// checkGreen is ✅'s square in Noto Color Emoji, rocketRed 🚀's fins,
	// warnYellow ⚠️'s triangle.
	checkGreen = colour{0x78, 0xb4, 0x46, 40}
	rocketRed  = colour{0xc8, 0x30, 0x28, 48}
	warnYellow = colour{0xfc, 0xc2, 0x1b, 48}
)

// countNear counts the pixels of c in the box x0-x1, y0-y1 (points) of an
// RGB raster at dpi.
func countNear(w, h int, px []byte, dpi int, x0, y0, x1, y1 float64, c colour) int {
	s := float64(dpi) / 72
	n := 0
	for y := max(0, int(y0*s)); y < min(h, int(y1*s)); y++ {
		for x := max(0, int(x0*s)); x < min(w, int(x1*s)); x++ {
			i := 3 * (y*w + x)
			if within(px[i], c.r, c.tol) && within(px[i+1], c.g, c.tol) && within(px[i+2], c.b, c.tol) {
				n++
			}
		}
	}
	return n
}

func within(a, b, tol byte) bool { return max(a, b)-min(a, b) <= tol }

// TestEmojiDrawnAsImages renders emoji through the real layout, fpdf and
// poppler: each is drawn in its colours between the words around it, on
// their line, the text reads back in order with the emoji in it, a glyph
// used many times is embedded once, U+FE0F asks for the emoji of a
// character DejaVu has (⚠️) while the bare one stays text, and a ZWJ
// sequence and a skin tone are each one image and read back whole.
func TestEmojiDrawnAsImages(t *testing.T) {
	needEmojiFont(t)
	needTool(t, "pdftotext")
	needTool(t, "pdftoppm")
	needTool(t, "pdfimages")
	src := "# Launch 🚀\n\nokbefore ✅ okafter\n\nredbefore 🚀 redafter 🚀🚀 🚀\n\nwarnbefore ⚠️ warnafter ⚠ plain\n\n" +
		"family 👨‍👩‍👧 tone 👍🏽 end\n\n`code 🚀` and\n\n```\nblock ✅\n```\n"
	r := emojiRenderer(t, SystemEmoji)
	resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: basicTokens, numbering: stage.NumberingNone})

	text := strings.Join(strings.Fields(readingText(t, resp.PDF)), " ")
	for _, want := range []string{"Launch 🚀", "okbefore ✅ okafter", "redbefore 🚀 redafter 🚀🚀 🚀",
		"warnbefore ⚠️ warnafter ⚠ plain", "family 👨\u200d👩\u200d👧 tone 👍🏽 end", "code 🚀 and", "block ✅"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.ContainsRune(text, '\uFFFD') {
		t.Errorf("text holds U+FFFD:\n%s", text)
	}

	const dpi = 144
	w, h, px := rasterRGB(t, resp.PDF, dpi)
	word := func(s string) bboxWord {
		t.Helper()
		for _, wd := range pdfBoxes(t, resp.PDF)[0].Words {
			if wd.Text == s {
				return wd
			}
		}
		t.Fatalf("no word %q", s)
		return bboxWord{}
	}
	// Between two words, on their line: the emoji's colour, and not the
	// other's.
	between := func(before, after string, want, not colour) {
		t.Helper()
		a, b := word(before), word(after)
		if n := countNear(w, h, px, dpi, a.X1, a.Y0-2, b.X0, b.Y1+2, want); n < 20 {
			t.Errorf("%d pixels of the emoji's colour between %q and %q", n, before, after)
		}
		if n := countNear(w, h, px, dpi, a.X1, a.Y0-2, b.X0, b.Y1+2, not); n > 0 {
			t.Errorf("%d pixels of another emoji's colour between %q and %q", n, before, after)
		}
	}
	between("okbefore", "okafter", checkGreen, rocketRed)
	between("redbefore", "redafter", rocketRed, checkGreen)
	between("warnbefore", "warnafter", warnYellow, checkGreen)
	// The bare ⚠ is text: no yellow between "warnafter" and "plain".
	if a, b := word("warnafter"), word("plain"); countNear(w, h, px, dpi, a.X1, a.Y0-2, b.X0, b.Y1+2, warnYellow) > 0 {
		t.Errorf("⚠ without U+FE0F drawn as an emoji")
	}

	// 🚀 six times, ✅ twice, ⚠️, 👨‍👩‍👧 and 👍🏽: five images, each with
	// its soft mask.
	if n := imageObjects(t, resp.PDF); n != 5 {
		t.Errorf("%d images embedded, want 5 (one per glyph)", n)
	}
}

// imageObjects counts the distinct image objects the PDF draws (pdfimages
// lists each use of one).
func imageObjects(t testing.TB, pdf []byte) int {
	objects := map[string]bool{}
	for _, line := range strings.Split(runFile(t, pdf, "pdfimages", "-list"), "\n")[2:] {
		if f := strings.Fields(line); len(f) > 11 && f[2] == "image" {
			objects[f[10]] = true
		}
	}
	return len(objects)
}

// TestEmojiWithoutFont: without the emoji font, emoji are U+FFFD, as
// before.
func TestEmojiWithoutFont(t *testing.T) {
	needTool(t, "pdftotext")
	r := emojiRenderer(t, "")
	resp := renderPDF(t, r, req{doc: markdownDoc(t, "go 🚀 now ✅\n"), tokens: basicTokens, numbering: stage.NumberingNone})
	if got := strings.Join(strings.Fields(bodyText(t, resp.PDF)), " "); got != "go \uFFFD now \uFFFD" {
		t.Errorf("text = %q", got)
	}
}

// TestManyEmojiBounded renders 100,000 emoji of ten glyphs: each glyph is
// embedded once, and time and heap stay within what a long document of
// text costs.
func TestManyEmojiBounded(t *testing.T) {
	needEmojiFont(t)
	needTool(t, "pdfimages")
	const heapBound = 256 << 20
	r := emojiRenderer(t, SystemEmoji)
	d := markdownDoc(t, manyEmoji(100_000, tenEmoji))
	runtime.GC()
	peak := 0
	stop := plugintest.SamplePeakHeap(&peak)
	start := time.Now()
	resp := renderPDF(t, r, req{doc: d, tokens: basicTokens})
	took := time.Since(start)
	stop()
	t.Logf("100,000 emoji: %d pages, %v, peak heap %d MiB, PDF %d KB", resp.Pages, took, peak>>20, len(resp.PDF)>>10)
	if peak > heapBound {
		t.Errorf("peak heap %d MiB, over %d MiB", peak>>20, heapBound>>20)
	}
	if n := imageObjects(t, resp.PDF); n != len(tenEmoji) {
		t.Errorf("%d images embedded, want %d", n, len(tenEmoji))
	}
}

// TestEmojiItemsBounded: an emoji is painted as its image and as
// invisible text over it, twice the page content of a text run, and
// counts twice against layout.MaxItems. Counted once, a document of
// 245,000 emoji (1.2 MB) rendered with 319 MiB of heap, over the bound
// that every document inside the budgets keeps to
// (TestHostileLayoutBounded); now it is refused before the memory is
// spent, and the most emoji a document may hold stay under the bound.
func TestEmojiItemsBounded(t *testing.T) {
	needEmojiFont(t)
	const heapBound = 256 << 20
	r := emojiRenderer(t, SystemEmoji)
	for _, tc := range []struct {
		n       int
		refused bool
	}{{layout.MaxItems/2 - 5000, false}, {layout.MaxItems - 5000, true}} {
		q := &stage.RenderRequest{Document: markdownDoc(t, manyEmoji(tc.n, tenEmoji)), Tokens: modernTokens, Page: a4(t), Numbering: stage.NumberingNone}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak := 0
		stop := plugintest.SamplePeakHeap(&peak)
		_, err := r.Render(context.Background(), q)
		stop()
		peak -= int(ms.HeapAlloc)
		t.Logf("%d emoji: peak heap %d MiB over the tree: %v", tc.n, peak>>20, err)
		if peak > heapBound {
			t.Errorf("%d emoji: peak heap %d MiB, want under %d MiB", tc.n, peak>>20, heapBound>>20)
		}
		var se *stage.Error
		if refused := errors.As(err, &se) && se.Code == stage.CodeTooLarge; refused != tc.refused {
			t.Errorf("%d emoji: %v, want refused %v", tc.n, err, tc.refused)
		} else if err != nil && !refused {
			t.Fatal(err)
		}
	}
}

// TestDistinctEmojiBounded: past layout.MaxEmojiImages distinct glyphs
// a document's emoji are U+FFFD, so that a few KB listing every emoji
// cannot cost seconds of embedding.
func TestDistinctEmojiBounded(t *testing.T) {
	needEmojiFont(t)
	needTool(t, "pdfimages")
	r := emojiRenderer(t, SystemEmoji)
	glyphs := distinctEmoji(layout.MaxEmojiImages + 100)
	resp := renderPDF(t, r, req{doc: markdownDoc(t, manyEmoji(len(glyphs), glyphs)), tokens: basicTokens})
	if n := imageObjects(t, resp.PDF); n != layout.MaxEmojiImages {
		t.Errorf("%d images embedded for %d distinct emoji, want the bound, %d", n, len(glyphs), layout.MaxEmojiImages)
	}
	if text := pdfText(t, resp.PDF); !strings.ContainsRune(text, '\uFFFD') {
		t.Error("no U+FFFD past the bound")
	}
}

var tenEmoji = []string{"🚀", "✅", "🎉", "👍", "⚠️", "😀", "🔥", "💡", "📦", "🐛"}

// distinctEmoji are n emoji of distinct glyphs (n up to 1,200).
func distinctEmoji(n int) []string {
	var out []string
	for r := rune(0x1F300); len(out) < n && r < 0x1FAFF; r++ {
		if r < 0x1F3FB || r > 0x1F3FF { // skin tones join the emoji before them
			out = append(out, string(r))
		}
	}
	return out
}

// manyEmoji is Markdown of n emoji taken in turn from glyphs, fifty a
// paragraph.
func manyEmoji(n int, glyphs []string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(glyphs[i%len(glyphs)])
		if i%50 == 49 {
			b.WriteString("\n\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// BenchmarkRenderEmoji renders 100,000 emoji of ten glyphs, and 1,000
// emoji of distinct glyphs, each embedded once. Run it with
//
//	go test -run '^$' -bench RenderEmoji -benchmem ./plugins/render-fpdf/render/
func BenchmarkRenderEmoji(b *testing.B) {
	needEmojiFont(b)
	r := emojiRenderer(b, SystemEmoji)
	for _, c := range []struct {
		name string
		md   string
	}{
		{"emoji=100000/glyphs=10", manyEmoji(100_000, tenEmoji)},
		{"emoji=1000/glyphs=1000", manyEmoji(1000, distinctEmoji(1000))},
	} {
		d := markdownDoc(b, c.md)
		b.Run(c.name, func(b *testing.B) {
			page, _ := papers.Lookup("A4")
			benchRender(b, r, &stage.RenderRequest{Document: d, Tokens: basicTokens, Page: page, Numbering: stage.NumberingCenter})
		})
	}
}

// benchRender renders q with r once per iteration and reports the pages,
// CPU time, peak heap and PDF size per render.
func benchRender(b *testing.B, r *Renderer, q *stage.RenderRequest) {
	var peak, pages, size int
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		stop := plugintest.SamplePeakHeap(&peak)
		resp, err := r.Render(context.Background(), q)
		stop()
		if err != nil {
			b.Fatal(err)
		}
		pages, size = resp.Pages, len(resp.PDF)
	}
	b.ReportMetric(float64(pages), "pages/op")
	b.ReportMetric((cpuTime()-cpu).Seconds()*1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(size)/(1<<10), "pdf-KiB")
}
