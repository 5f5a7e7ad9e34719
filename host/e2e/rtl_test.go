package e2e

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// rtlSample mixes blocks whose first strong character is Hebrew with
// English ones, in plain Markdown without any dir attribute.
const rtlSample = "# כותרת בעברית\n\n" +
	"זוהי פסקה בעברית עם מספר 42 ומילה English באמצע. זוהי פסקה ארוכה מספיק כדי לעבור " +
	"לשורה הבאה בעמוד, כך שנוכל לראות את היישור לימין של כל השורות.\n\n" +
	"An English paragraph stays left to right.\n\n" +
	"1. ראשון\n2. שני\n\n" +
	"> ציטוט בעברית.\n"

// TestRightToLeftBlocks reads the PDF of rtlSample as a reader would, on
// each backend: as GitHub shows Markdown (dir="auto" on each block), a
// Hebrew paragraph's lines end at the right margin and its full stop is at
// the left end of its last line, a Hebrew list has its numbers on its
// right and a Hebrew quote its bar there, while an English paragraph
// starts at the left margin. Both backends laid every block out left to
// right: the Hebrew lines started at the left margin and the full stop
// was printed at the right end.
func TestRightToLeftBlocks(t *testing.T) {
	pdfcheck.Require(t)
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			_, key := h.account("pro", -1)
			resp, pdf := h.post(key, map[string]string{"markdown": rtlSample, "pageNumeration": "none"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
			}
			words := pdfcheck.Words(t, pdf)
			find := func(s string) pdfcheck.Word {
				t.Helper()
				for _, w := range words {
					if strings.Contains(w.Text, s) {
						return w
					}
				}
				t.Fatalf("no word %q in %v", s, words)
				return pdfcheck.Word{}
			}
			english := find("An")
			left := english.XMin
			right := english.PageW - left // the themes' margins are even
			if left > 80 {
				t.Errorf("the English paragraph starts at x=%.1f, not at the left margin", left)
			}

			// pdftotext gives right-to-left words in drawing order, reversed.
			first, last := line(words, find("42")), find("תורושה")
			for _, w := range []pdfcheck.Word{find("תרתוכ"), first[len(first)-1]} {
				if math.Abs(w.XMax-right) > 2 {
					t.Errorf("%q ends at x=%.1f, not at the right margin %.1f", w.Text, w.XMax, right)
				}
			}
			end := line(words, last)
			if end[0].Text != last.Text || !strings.Contains(last.Text, ".") {
				t.Errorf("the last line of the Hebrew paragraph reads %v: its full stop is not at its left end", texts(end))
			}
			if r := end[len(end)-1]; math.Abs(r.XMax-right) > 2 {
				t.Errorf("the last line of the Hebrew paragraph ends at x=%.1f, not at the right margin %.1f", r.XMax, right)
			}

			item := find("ןושאר")
			number := line(words, item)
			if n := number[len(number)-1]; !strings.Contains(n.Text, "1") || n.XMin < item.XMax {
				t.Errorf("the Hebrew list's first item reads %v: its number is not on its right", texts(number))
			}
			quote := find("טוטיצ")
			if quote.XMax > right-5 || quote.XMax < right-40 {
				t.Errorf("the Hebrew quote ends at x=%.1f: not beside a bar at the right margin %.1f", quote.XMax, right)
			}
		})
	}
}

// rtlTables holds a table in <div dir="rtl">, one in a Hebrew quote (its
// second column aligned left) and one at the top level, their cells in
// English so that pdftotext gives their words as written.
const rtlTables = "<div dir=\"rtl\">\n\n| Alpha header | Beta |\n|---|---|\n| a1 | b1 |\n\n</div>\n\n" +
	"> ציטוט בעברית\n>\n> | Gamma header | Delta |\n> |---|:---|\n> | g1 | d1 |\n\n" +
	"| Epsilon header | Zeta |\n|---|---|\n| e1 | z1 |\n"

// TestRightToLeftTables reads the PDF of rtlTables on each backend: a
// table takes its container's direction, so in the div and the quote
// its first column is on the right and a cell without an alignment of its
// own is right-aligned, while the top-level table is left to right.
// render-fpdf laid every table out left to right.
func TestRightToLeftTables(t *testing.T) {
	pdfcheck.Require(t)
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			_, key := h.account("pro", -1)
			resp, pdf := h.post(key, map[string]string{"markdown": rtlTables, "pageNumeration": "none"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
			}
			words := pdfcheck.Words(t, pdf)
			find := func(s string) pdfcheck.Word { t.Helper(); return findWord(t, words, s) }
			for _, tc := range []struct {
				first, second, cell, secondCell string
				rtl, secondLeft                 bool
			}{
				{"Alpha", "Beta", "a1", "b1", true, false},
				{"Gamma", "Delta", "g1", "d1", true, true},
				{"Epsilon", "Zeta", "e1", "z1", false, true},
			} {
				first, second, cell := find(tc.first), find(tc.second), find(tc.cell)
				header := line(words, first)
				if got := first.XMin > second.XMin; got != tc.rtl {
					t.Errorf("%s's header reads %v: first column on the right %v, want %v", tc.first, texts(header), got, tc.rtl)
				}
				// The first column is the widest word of its header.
				end := header[len(header)-1]
				if tc.rtl {
					if math.Abs(cell.XMax-end.XMax) > 1 {
						t.Errorf("%s ends at x=%.1f, its header at %.1f: not right-aligned", tc.cell, cell.XMax, end.XMax)
					}
					if header[0].XMin < end.PageW/2 {
						t.Errorf("%s's table starts at x=%.1f: not in the right half of the page", tc.first, header[0].XMin)
					}
				} else if math.Abs(cell.XMin-first.XMin) > 1 {
					t.Errorf("%s starts at x=%.1f, its header at %.1f: not left-aligned", tc.cell, cell.XMin, first.XMin)
				}
				if sc := find(tc.secondCell); tc.secondLeft != (math.Abs(sc.XMin-second.XMin) < 1) {
					t.Errorf("%s starts at x=%.1f, its header %s at %.1f: left-aligned %v", tc.secondCell, sc.XMin, tc.second, second.XMin, tc.secondLeft)
				}
			}
		})
	}
}

// line returns the words on the line of w, left to right. Punctuation in
// another font sits a little higher or lower, so lines match by their
// middles.
func line(words []pdfcheck.Word, w pdfcheck.Word) []pdfcheck.Word {
	mid := (w.YMin + w.YMax) / 2
	var out []pdfcheck.Word
	for _, o := range words {
		if o.Page == w.Page && math.Abs((o.YMin+o.YMax)/2-mid) < 3 {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].XMin < out[j].XMin })
	return out
}

func texts(ws []pdfcheck.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Text
	}
	return out
}
