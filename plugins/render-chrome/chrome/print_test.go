package chrome

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/sdk/stage"
)

func TestUserStyleTurnsHeadingRed(t *testing.T) {
	r := sharedRenderer(t)
	tests := []struct {
		name    string
		css     string
		wantRed bool
	}{
		{"user style", "h1{color:#ff0000}", true},
		{"no user style", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := render(t, r, doc{css: tt.css, body: "<h1>A heading in large type</h1><p>Body text.</p>"})
			red := countPixels(t, res.PDF, isRed)
			if tt.wantRed && red < 20 {
				t.Fatalf("%d red pixels, want the heading red", red)
			}
			if !tt.wantRed && red != 0 {
				t.Fatalf("%d red pixels, want none", red)
			}
		})
	}
}

func TestAllPageSizes(t *testing.T) {
	r := sharedRenderer(t)
	needTool(t, "pdfinfo")
	// The sizes share the browser and run at once on its tabs.
	t.Run("sizes", func(t *testing.T) {
		for _, size := range papers.All() {
			t.Run(size.Name, func(t *testing.T) {
				t.Parallel()
				res := render(t, r, doc{size: size, numbering: "bottom-center", body: "<p>Size " + size.Name + "</p>"})
				if res.Pages != 1 {
					t.Errorf("Pages = %d, want 1", res.Pages)
				}
				info := pdfInfo(t, res.PDF)
				w, h := pdfPageSize(t, info)
				if math.Abs(w-size.WidthPt) > 1 || math.Abs(h-size.HeightPt) > 1 {
					t.Fatalf("page is %.2f x %.2f pt, want %.2f x %.2f", w, h, size.WidthPt, size.HeightPt)
				}
				if info["Pages"] != "1" {
					t.Fatalf("pdfinfo says %s pages", info["Pages"])
				}
			})
		}
	})
}

// TestPaperWinsOverCSSSize checks that the paper is the requested size
// whatever size the document's @page rule names, and that the margin boxes
// still print. Chromium takes the orientation from a CSS size even with
// preferCSSPageSize off: a landscape rule turns the paper.
func TestPaperWinsOverCSSSize(t *testing.T) {
	r := sharedRenderer(t)
	letter, _ := papers.Lookup("Letter")
	tests := []struct {
		name, pageRule string
		w, h           float64
	}{
		{"no size", "@page { margin: 72pt; @bottom-center { content: counter(page) } }", 612, 792},
		{"another size", "@page { size: A5; margin: 72pt; @bottom-center { content: counter(page) } }", 612, 792},
		{"size keyword", "@page { size: letter; margin: 72pt; @bottom-center { content: counter(page) } }", 612, 792},
		{"landscape", "@page { size: A5 landscape; margin: 72pt; @bottom-center { content: counter(page) } }", 792, 612},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			html := `<!doctype html><html><head><style>` + tt.pageRule + `</style></head><body><p>Paper</p></body></html>`
			res, err := r.Render(context.Background(), &stage.RenderRequest{HTML: html, Page: letter})
			if err != nil {
				t.Fatal(err)
			}
			w, h := pdfPageSize(t, pdfInfo(t, res.PDF))
			if math.Abs(w-tt.w) > 1 || math.Abs(h-tt.h) > 1 {
				t.Fatalf("page is %.2f x %.2f pt, want %g x %g", w, h, tt.w, tt.h)
			}
			words, _, height := pdfWords(t, res.PDF)
			numbered := false
			for _, wd := range words {
				if wd.text == "1" && wd.yMin > height-72 {
					numbered = true
				}
			}
			if !numbered {
				t.Fatalf("no page number in the bottom margin: %+v", words)
			}
		})
	}
}

func TestPageNumbersInMarginBoxes(t *testing.T) {
	r := sharedRenderer(t)
	const pages = 4
	var body strings.Builder
	for i := range pages {
		fmt.Fprintf(&body, "<h2>Chapter %s</h2><p>Words on this page.</p>", strings.Repeat("I", i+1))
		if i < pages-1 {
			body.WriteString(`<div style="break-after: page"></div>`)
		}
	}
	tests := []struct {
		box   string
		where func(w bboxWord, width float64) bool
	}{
		{"bottom-center", func(w bboxWord, width float64) bool { return math.Abs((w.xMin+w.xMax)/2-width/2) < 20 }},
		{"bottom-left", func(w bboxWord, width float64) bool { return w.xMax < width/3 }},
		{"bottom-right", func(w bboxWord, width float64) bool { return w.xMin > width*2/3 }},
	}
	for _, tt := range tests {
		t.Run(tt.box, func(t *testing.T) {
			res := render(t, r, doc{numbering: tt.box, body: body.String()})
			if res.Pages != pages {
				t.Fatalf("Pages = %d, want %d", res.Pages, pages)
			}
			words, width, height := pdfWords(t, res.PDF)
			found := map[int]bool{}
			for _, w := range words {
				n, err := strconv.Atoi(w.text)
				if err != nil {
					continue
				}
				if n != w.page {
					t.Errorf("page %d carries the number %d", w.page, n)
				}
				// In the bottom margin (54 pt), not in the body.
				if w.yMin < height-54 {
					t.Errorf("page %d: number at y=%.1f, want in the bottom margin (page height %.1f)", w.page, w.yMin, height)
				}
				if !tt.where(w, width) {
					t.Errorf("page %d: number at x=%.1f..%.1f, not %s of a %.1f pt page", w.page, w.xMin, w.xMax, tt.box, width)
				}
				found[w.page] = true
			}
			for p := 1; p <= pages; p++ {
				if !found[p] {
					t.Errorf("page %d has no page number", p)
				}
			}
		})
	}
}

func TestOutlineAndTags(t *testing.T) {
	r := sharedRenderer(t)
	needTool(t, "qpdf")
	res := render(t, r, doc{body: `<h1>Introduction</h1><p>a</p><h2>Background</h2><p>b</p>
		<div style="break-after: page"></div><h1>Results</h1><p>c</p>`})
	if info := pdfInfo(t, res.PDF); info["Tagged"] != "yes" {
		t.Errorf("pdfinfo Tagged = %q, want yes", info["Tagged"])
	}
	out := run(t, "qpdf", "--json", "--json-key=outlines", writePDF(t, res.PDF))
	var doc struct {
		Outlines []outline `json:"outlines"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("qpdf json: %v", err)
	}
	var titles []string
	var walk func([]outline)
	walk = func(os []outline) {
		for _, o := range os {
			titles = append(titles, o.Title)
			walk(o.Kids)
		}
	}
	walk(doc.Outlines)
	want := []string{"Introduction", "Background", "Results"}
	if strings.Join(titles, "|") != strings.Join(want, "|") {
		t.Fatalf("outline %q, want %q", titles, want)
	}
}

type outline struct {
	Title string    `json:"title"`
	Kids  []outline `json:"kids"`
}

func TestCJKAndEmojiSurvive(t *testing.T) {
	r := sharedRenderer(t)
	res := render(t, r, doc{body: "<p>日本語 中文 한국어</p><p>emoji 😀 🎉</p>"})
	text := pdfText(t, res.PDF)
	for _, want := range []string{"日本語", "中文", "한국어", "😀", "🎉"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q missing from the PDF text:\n%s", want, text)
		}
	}
}

func TestPageCount(t *testing.T) {
	r := sharedRenderer(t)
	for _, n := range []int{1, 3, 25} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			body := strings.Repeat(`<p>Text.</p><div style="break-after: page"></div>`, n-1) + "<p>End.</p>"
			res := render(t, r, doc{body: body})
			if res.Pages != n {
				t.Fatalf("Pages = %d, want %d", res.Pages, n)
			}
			if got := pdfInfo(t, res.PDF)["Pages"]; got != strconv.Itoa(n) {
				t.Fatalf("pdfinfo Pages = %s, want %d", got, n)
			}
		})
	}
}

// TestLargePDF checks that a PDF of many megabytes comes back whole
// through the stream.
func TestLargePDF(t *testing.T) {
	r := sharedRenderer(t)
	// Noise does not compress, so each image keeps its megabytes.
	rng := rand.New(rand.NewPCG(1, 2))
	var body strings.Builder
	for range 2 {
		img := image.NewNRGBA(image.Rect(0, 0, 900, 900))
		for i := range img.Pix {
			img.Pix[i] = byte(rng.UintN(256))
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&body, `<img style="width: 400pt; break-after: page; display: block" src="data:image/png;base64,%s">`,
			base64.StdEncoding.EncodeToString(buf.Bytes()))
	}
	res := render(t, r, doc{body: body.String()})
	if len(res.PDF) < 4<<20 {
		t.Fatalf("PDF is %d bytes, want a large one", len(res.PDF))
	}
	if got := pdfInfo(t, res.PDF)["Pages"]; got != strconv.Itoa(res.Pages) || res.Pages < 2 {
		t.Fatalf("pdfinfo Pages = %s, Render said %d", got, res.Pages)
	}
	t.Logf("%d pages, %d bytes", res.Pages, len(res.PDF))
}

func TestInvalidRequests(t *testing.T) {
	r := sharedRenderer(t)
	a4, _ := papers.Lookup("A4")
	tests := []struct {
		name string
		req  stage.RenderRequest
	}{
		{"empty html", stage.RenderRequest{Page: a4}},
		{"no page size", stage.RenderRequest{HTML: "<p>x</p>"}},
		{"negative size", stage.RenderRequest{HTML: "<p>x</p>", Page: stage.PageSize{WidthPt: -1, HeightPt: 10}}},
		{"huge size", stage.RenderRequest{HTML: "<p>x</p>", Page: stage.PageSize{WidthPt: 1e6, HeightPt: 10}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Render(context.Background(), &tt.req)
			if stage.CodeOf(err) != stage.CodeInvalid {
				t.Fatalf("got %v, want CodeInvalid", err)
			}
		})
	}
}

func TestConcurrentRendersAllSucceed(t *testing.T) {
	r := sharedRenderer(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			a4, _ := papers.Lookup("A4")
			res, err := r.Render(ctx, &stage.RenderRequest{HTML: doc{body: fmt.Sprintf("<p>doc %d</p>", i)}.html(), Page: a4})
			if err == nil && res.Pages != 1 {
				err = fmt.Errorf("doc %d: %d pages", i, res.Pages)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestPageLimit: a document over maxPages is refused as too large, like on
// render-fpdf, and a page-count bomb is refused without printing its pages.
func TestPageLimit(t *testing.T) {
	r := newRenderer(t, `{"tabs":1,"maxPages":5}`)
	pages := func(n int) string {
		return strings.Repeat(`<p>Text.</p><div style="break-after: page"></div>`, n-1) + "<p>End.</p>"
	}
	if res := render(t, r, doc{body: pages(5)}); res.Pages != 5 {
		t.Fatalf("a 5-page document: %d pages", res.Pages)
	}
	for _, n := range []int{6, 500} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			a4, _ := papers.Lookup("A4")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			start := time.Now()
			_, err := r.Render(ctx, &stage.RenderRequest{HTML: doc{body: pages(n)}.html(), Page: a4})
			var se *stage.Error
			if stage.CodeOf(err) != stage.CodeTooLarge || !errors.As(err, &se) || se.Details["limit"] != "5 pages" {
				t.Fatalf("%d pages: %v", n, err)
			}
			t.Logf("%d pages refused in %v", n, time.Since(start))
		})
	}
	// The tab is still good for the next document.
	if res := render(t, r, doc{body: pages(2)}); res.Pages != 2 {
		t.Fatalf("after a refused document: %d pages", res.Pages)
	}
}

// TestPDFSizeLimit: a small document whose PDF is huge (an SVG noise
// filter, which Chromium rasterises at 300 dpi into every page it covers)
// is refused as too large once the PDF passes maxPDFBytes, and its tab,
// which printed it, is replaced rather than reused.
func TestPDFSizeLimit(t *testing.T) {
	r := newRenderer(t, `{"tabs":1,"maxPDFBytes":1048576}`)
	const noise = `<svg width="0" height="0" style="position: absolute"><filter id="n" x="0" y="0" width="100%" height="100%">` +
		`<feTurbulence type="fractalNoise" baseFrequency="0.9" seed="3"/></filter></svg>` +
		`<div style="height: 200pt; filter: url(#n)"></div>`
	a4, _ := papers.Lookup("A4")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	recycled := r.Stats().TabsRecycled
	_, err := r.Render(ctx, &stage.RenderRequest{HTML: doc{body: noise}.html(), Page: a4})
	var se *stage.Error
	if stage.CodeOf(err) != stage.CodeTooLarge || !errors.As(err, &se) || se.Details["limit"] != "1 MiB" ||
		se.Details["size"] != "more than 1 MiB (limit 1 MiB)" {
		t.Fatalf("a PDF over 1 MiB: %#v", err)
	}
	if got := r.Stats().TabsRecycled; got != recycled+1 {
		t.Errorf("tabs recycled: %d, want %d", got, recycled+1)
	}
	// Under the limit, and after the refusal, documents print.
	if res := render(t, r, doc{body: "<p>Small.</p>"}); res.Pages != 1 || len(res.PDF) > 1<<20 {
		t.Fatalf("after a refused PDF: %d pages, %d bytes", res.Pages, len(res.PDF))
	}
}
