package render

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

// TestThousandPages holds the 1,000-page document to the bounds the README
// states: its live heap stays under 200 MiB, and what a render allocates
// grows linearly with its pages (allocation is the cost that does not
// depend on how busy the machine is; the CPU time is BenchmarkRender's).
func TestThousandPages(t *testing.T) {
	const heapBound = 200 << 20
	r := newRenderer(t, `{}`)
	page := a4(t)
	// allocPerPage renders a document of about pages pages and returns
	// the bytes allocated per page and the render.
	allocPerPage := func(pages int) (float64, *stage.RenderResponse, int) {
		d := benchDoc(t, r, pages)
		q := &stage.RenderRequest{Document: d, Tokens: modernTokens, Page: page, Numbering: stage.NumberingCenter}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		peak := 0
		stop := plugintest.SamplePeakHeap(&peak)
		resp, err := r.Render(context.Background(), q)
		stop()
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(resp.Pages), resp, peak
	}
	per100, _, _ := allocPerPage(100)
	per1000, resp, peak := allocPerPage(1000)
	t.Logf("allocated per page: %.0f KB at 100 pages, %.0f KB at %d pages; peak heap %d MiB; PDF %d KB",
		per100/1e3, per1000/1e3, resp.Pages, peak>>20, len(resp.PDF)>>10)
	if resp.Pages < 950 {
		t.Fatalf("the document has %d pages, want about 1,000", resp.Pages)
	}
	if got := pdfInfo(t, resp.PDF)["Pages"]; got != strconv.Itoa(resp.Pages) {
		t.Fatalf("pdfinfo counts %s pages, the renderer %d", got, resp.Pages)
	}
	if peak > heapBound {
		t.Errorf("peak heap %d MiB, over the %d MiB the README states", peak>>20, heapBound>>20)
	}
	if per1000 > 1.25*per100 {
		t.Errorf("allocation per page grows with the document: %.0f KB at 1,000 pages vs %.0f KB at 100", per1000/1e3, per100/1e3)
	}
}

// TestHostileLayoutBounded: documents well inside the body, parse and page
// limits used to take the plugin to about 1 GB, held by the layout's runs
// and items: 450,000 inline code spans in one paragraph (1.8 MB, 194
// pages) and a table of 440 rows of one-letter cells (885 KB, 9,839
// pages). They are now refused with 413 naming the limit, before the
// memory is spent, and the most a document inside the budgets holds stays
// under the bound too. The bound is on what the render adds to the heap
// over the request's tree, which the parser's node limit bounds.
func TestHostileLayoutBounded(t *testing.T) {
	const heapBound = 256 << 20
	table := func(rows int) string {
		row := "|" + strings.Repeat("x|", 1000) + "\n"
		return "|" + strings.Repeat("h|", 1000) + "\n|" + strings.Repeat("-|", 1000) + "\n" + strings.Repeat(row, rows)
	}
	for _, tc := range []struct {
		name, md, limit string
	}{
		{"code spans in one paragraph", strings.Repeat("`a` ", 450_000), "text runs per block"},
		{"one-letter cells", table(440), "text runs per block"},
		{"code spans in paragraphs", strings.Repeat(strings.Repeat("`a` ", 1000)+"\n\n", 450), "drawing items"},
		{"items just inside the budget", strings.Repeat("`a` ", 99_000), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRenderer(t, `{}`)
			q := &stage.RenderRequest{Document: markdownDoc(t, tc.md), Tokens: modernTokens, Page: a4(t), Numbering: stage.NumberingNone}
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak := 0
			stop := plugintest.SamplePeakHeap(&peak)
			_, err := r.Render(context.Background(), q)
			stop()
			t.Logf("peak heap %d MiB over a tree of %d MiB: %v", (peak-int(ms.HeapAlloc))>>20, ms.HeapAlloc>>20, err)
			peak -= int(ms.HeapAlloc)
			if peak > heapBound {
				t.Errorf("peak heap %d MiB, want under %d MiB", peak>>20, heapBound>>20)
			}
			if tc.limit == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *stage.Error
			if !errors.As(err, &se) || se.Code != stage.CodeTooLarge || !strings.HasSuffix(se.Details["limit"], tc.limit) {
				t.Fatalf("got %#v, want a too-large error whose limit is in %s", err, tc.limit)
			}
		})
	}
}
