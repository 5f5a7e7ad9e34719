package e2e

import (
	"math"
	"strconv"
	"testing"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// pageWorkers bounds concurrent conversions: the backends saturate two
// cores at two or three renders, more only queue.
const pageWorkers = 3

// TestPageSizes: every size of core/papers comes out of every backend at
// its size, within the 1 pt the Chromium grid allows.
func TestPageSizes(t *testing.T) {
	pdfcheck.Require(t)
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			a := newAPI(t, h)
			_, key := h.account("pro", -1)
			sem := make(chan struct{}, pageWorkers)
			// The group returns once its parallel subtests are done, so the
			// host outlives them.
			t.Run("sizes", func(t *testing.T) {
				for _, size := range papers.All() {
					t.Run(size.Name, func(t *testing.T) {
						t.Parallel()
						sem <- struct{}{}
						defer func() { <-sem }()
						resp, pdf := a.call(t, "POST", "/v1/pdf/markdown", key, map[string]string{
							"markdown": "# " + size.Name + "\n\nA page of this size.", "pageSize": size.Name, "pageNumeration": "none",
						}, nil)
						if resp.StatusCode != 200 {
							t.Fatalf("status %d: %s", resp.StatusCode, pdf)
						}
						info := pdfcheck.Read(t, pdf)
						if math.Abs(info.WidthPt-size.WidthPt) > 1 || math.Abs(info.HeightPt-size.HeightPt) > 1 {
							t.Errorf("%s: %.2fx%.2f pt, want %.2fx%.2f", size.Name, info.WidthPt, info.HeightPt, size.WidthPt, size.HeightPt)
						}
					})
				}
			})
		})
	}
}

// TestNumbering: on a document of three pages or more (the exact count
// depends on the theme's metrics) each position puts the number N
// at the bottom of page N, in the left third, the middle or the right
// third; none puts no number there.
func TestNumbering(t *testing.T) {
	pdfcheck.Require(t)
	md := threePages()
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			a := newAPI(t, h)
			_, key := h.account("pro", -1)
			for _, pos := range []string{"none", "left", "center", "right"} {
				t.Run(pos, func(t *testing.T) {
					resp, pdf := a.call(t, "POST", "/v1/pdf/markdown", key, map[string]string{"markdown": md, "pageNumeration": pos}, nil)
					if resp.StatusCode != 200 {
						t.Fatalf("status %d: %s", resp.StatusCode, pdf)
					}
					if n := pdfcheck.Read(t, pdf).Pages; n < 3 {
						t.Fatalf("the sample document has %d pages on %s, want at least 3", n, backend)
					}
					checkNumbering(t, pdf, pos)
				})
			}
		})
	}
}

// footerZone is the bottom share of the page where numbers belong.
const footerZone = 0.12

// checkNumbering finds, on every page N, the word "N" in the footer zone
// and checks its horizontal third; for "none" it must be absent.
func checkNumbering(t testing.TB, pdf []byte, pos string) {
	t.Helper()
	words := pdfcheck.Words(t, pdf)
	pages := pdfcheck.Read(t, pdf).Pages
	for page := 1; page <= pages; page++ {
		var found []pdfcheck.Word
		for _, w := range words {
			if w.Page == page && w.Text == strconv.Itoa(page) && w.YMin > w.PageH*(1-footerZone) {
				found = append(found, w)
			}
		}
		if pos == "none" {
			if len(found) > 0 {
				t.Errorf("page %d: numbering none, yet %q at the bottom (x %.0f-%.0f, y %.0f)", page, found[0].Text, found[0].XMin, found[0].XMax, found[0].YMin)
			}
			continue
		}
		if len(found) == 0 {
			t.Errorf("page %d: no %d in the bottom %.0f%% of the page", page, page, footerZone*100)
			continue
		}
		ok := false
		for _, w := range found {
			if inThird(w, pos) {
				ok = true
			}
		}
		if !ok {
			w := found[0]
			t.Errorf("page %d: number at x %.0f-%.0f of %.0f, not %s", page, w.XMin, w.XMax, w.PageW, pos)
		}
	}
}

func inThird(w pdfcheck.Word, pos string) bool {
	third := w.PageW / 3
	switch pos {
	case "left":
		return w.XMax <= third
	case "right":
		return w.XMin >= 2*third
	case "center":
		mid := (w.XMin + w.XMax) / 2
		return w.XMin >= third && w.XMax <= 2*third && math.Abs(mid-w.PageW/2) < w.PageW/20
	}
	return false
}
