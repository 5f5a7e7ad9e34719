package themes

import (
	"fmt"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// mirror returns r flipped left to right.
func mirror(r raster) raster {
	out := raster{w: r.w, h: r.h, rgb: make([]byte, len(r.rgb))}
	for y := range r.h {
		for x := range r.w {
			copy(out.rgb[(y*r.w+r.w-1-x)*3:][:3], r.rgb[(y*r.w+x)*3:][:3])
		}
	}
	return out
}

// differingShifted is the share of pixels of b whose colour differs
// noticeably from those of a at the same place and one pixel either side:
// a box mirrored lands up to a pixel off, its edges shaded otherwise.
func differingShifted(a, b raster) float64 {
	if a.w != b.w || a.h != b.h {
		return 1
	}
	n := 0
	for y := range b.h {
		for x := range b.w {
			i := (y*b.w + x) * 3
			same := false
			for dx := -1; dx <= 1 && !same; dx++ {
				if x+dx < 0 || x+dx >= a.w {
					continue
				}
				j := (y*a.w + x + dx) * 3
				d := 0
				for k := range 3 {
					d += absInt(int(a.rgb[j+k]) - int(b.rgb[i+k]))
				}
				same = d <= 48
			}
			if !same {
				n++
			}
		}
	}
	return float64(n) / float64(b.w*b.h)
}

// A right-to-left block (dir="rtl") prints as the mirror image of the same
// block left to right: quote bars, code bars, list and definition indents,
// checkboxes and table cells on the side its text starts from. The themes
// placed them on the left whatever the direction, where a task's checkbox
// covered the first letter of its text. The content is black boxes, the
// same either way round, and the pages' side margins are equal.
func TestRightToLeftMirrorsLeftToRight(t *testing.T) {
	print := newPrinter(t)
	s := New(nil)
	a5 := mustPage(t, "A5")
	box := func(w int) string {
		return fmt.Sprintf(`<span style="display:inline-block;width:%dpt;height:7pt;background:#000"></span>`, w)
	}
	body := `<blockquote><p>` + box(120) + `</p></blockquote>` +
		`<ul class="contains-task-list"><li class="task-list-item"><input type="checkbox" disabled> ` + box(60) + `</li></ul>` +
		`<ul><li>` + box(80) + `<ul><li>` + box(50) + `</li></ul></li></ul>` +
		`<table><thead><tr><th>` + box(30) + `</th><th>` + box(70) + `</th></tr></thead><tbody><tr><td>` + box(10) + `</td><td>` + box(40) + `</td></tr></tbody></table>` +
		`<pre><code>` + box(90) + `</code></pre>` +
		`<dl><dt>` + box(40) + `</dt><dd>` + box(100) + `</dd></dl>`
	for _, theme := range []string{"modern", "basic"} {
		t.Run(theme, func(t *testing.T) {
			if toks, _ := s.Tokens(theme, a5); toks.Margins[1] != toks.Margins[3] {
				t.Skipf("%s's side margins differ: %v", theme, toks.Margins)
			}
			page := func(dir string) raster {
				html := `<div dir="` + dir + `">` + body + `</div>`
				return rasterize(t, print(style(t, s, &stage.StyleRequest{Document: stage.Document{HTML: html, Title: "t"}, Theme: theme, Page: a5, Numbering: stage.NumberingNone})))[0]
			}
			ltr, rtl := page("ltr"), page("rtl")
			if d := differingShifted(mirror(ltr), rtl); d > 0.001 {
				t.Errorf("%.2f%% of the page differs between the right-to-left print and the left-to-right one mirrored", 100*d)
			}
		})
	}
}
