package render

import (
	"context"
	"runtime"
	"strconv"
	"testing"

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
		stop := samplePeakHeap(&peak)
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
