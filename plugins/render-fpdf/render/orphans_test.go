package render

import (
	"fmt"
	"strings"
	"testing"
)

// linesPerPage counts, page by page, the lines (distinct baselines) of
// the words starting with prefix: how a reader sees a block split over
// pages.
func linesPerPage(pages []bboxPage, prefix string) []int {
	var counts []int
	for _, p := range pages {
		ys := map[float64]bool{}
		for _, w := range p.Words {
			if strings.HasPrefix(w.Text, prefix) {
				ys[w.Y1] = true
			}
		}
		if len(ys) > 0 {
			counts = append(counts, len(ys))
		}
	}
	return counts
}

// TestOrphansAndWidows pushes a paragraph and a code block, each after a
// heading, down the page a line at a time, and reads back where each
// breaks: a paragraph leaves no fewer than two of its lines on either
// side of a page break and a code block no fewer than four, as the
// themes' CSS (p and pre orphans and widows) asks of Chromium; a block
// too short for that starts on the next page, and its heading goes with
// it. A paragraph's last line printed alone at the top of a page, and a
// code block's first line alone at the foot of one.
func TestOrphansAndWidows(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	var para strings.Builder
	for i := range 40 {
		fmt.Fprintf(&para, "para%02d and some words ", i)
	}
	// Hard breaks make it three lines whatever the column's width.
	threeLines := "para00 first line\\\npara01 second line\\\npara02 third line"
	code := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "code%02d := %d\n", i, i)
		}
		return b.String()
	}
	blocks := []struct {
		name, md, prefix string
		least            int
		splits           bool // long enough to break between pages
	}{
		{"paragraph", para.String(), "para", 2, true},
		{"three-line paragraph", threeLines, "para", 2, false},
		{"code", "```\n" + code(12) + "```", "code", 4, true},
		{"short code", "```\n" + code(7) + "```", "code", 4, false},
	}
	for _, th := range themes {
		for _, b := range blocks {
			t.Run(th.name+"/"+b.name, func(t *testing.T) {
				split, starts := 0, map[int]bool{}
				for fillers := 40; fillers < 64; fillers++ {
					var src strings.Builder
					for i := range fillers {
						fmt.Fprintf(&src, "Filler %d.\n\n", i)
					}
					src.WriteString("## Heading\n\n" + b.md + "\n\nAfter.\n")
					resp := renderPDF(t, r, req{doc: markdownDoc(t, src.String()), tokens: th.tokens})
					pages := pdfBoxes(t, resp.PDF)
					counts := linesPerPage(pages, b.prefix)
					for i, c := range counts {
						if len(counts) > 1 && c < b.least {
							t.Errorf("%d fillers: %v lines per page; part %d has %d", fillers, counts, i+1, c)
						}
					}
					if len(counts) > 1 {
						split++
					}
					// The heading is on the page the block starts on.
					for pi, p := range pages {
						heading, first := false, false
						for _, w := range p.Words {
							heading = heading || w.Text == "Heading"
							first = first || strings.HasPrefix(w.Text, b.prefix+"00")
						}
						if heading != first {
							t.Errorf("%d fillers: the heading and the block's first line on different pages", fillers)
						}
						if first {
							starts[pi] = true
						}
					}
				}
				if len(starts) < 2 || b.splits && split == 0 {
					t.Errorf("the block started on %d pages and split %d times: the sweep never reached the foot of a page", len(starts), split)
				}
			})
		}
	}
}
