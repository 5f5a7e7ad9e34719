package render

import (
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// ink measures the dark pixels of a rasterized page: how many there are,
// their box, and the slant of what they draw (the mean x of the dark
// pixels in the upper half of the box less that of the lower half).
type ink struct {
	dark           int
	x0, y0, x1, y1 int
	slant          float64
}

func measureInk(w, h int, px []byte, x0, x1 int) ink {
	m := ink{x0: w, y0: h, x1: -1, y1: -1}
	dark := func(x, y int) bool { return px[y*w+x] < 128 }
	for y := range h {
		for x := x0; x < x1; x++ {
			if dark(x, y) {
				m.dark++
				m.x0, m.x1 = min(m.x0, x), max(m.x1, x)
				m.y0, m.y1 = min(m.y0, y), max(m.y1, y)
			}
		}
	}
	mid := (m.y0 + m.y1) / 2
	var sum [2]float64
	var n [2]int
	for y := m.y0; y <= m.y1; y++ {
		half := 0
		if y > mid {
			half = 1
		}
		for x := x0; x < x1; x++ {
			if dark(x, y) {
				sum[half] += float64(x)
				n[half]++
			}
		}
	}
	if n[0] > 0 && n[1] > 0 {
		m.slant = sum[0]/float64(n[0]) - sum[1]/float64(n[1])
	}
	return m
}

// w2pt is a raster width in points.
func w2pt(w, dpi int) float64 { return float64(w) * 72 / float64(dpi) }

// TestSyntheticCJKStyles: text drawn with a fallback font, which has one
// face, comes out bold and oblique where the Markdown asks for it, as
// Chromium synthesizes them: bold as a run with clearly more ink, oblique
// as one whose upper half leans right of its lower half, and both read
// back as the same text. They were drawn regular, pixel for pixel.
func TestSyntheticCJKStyles(t *testing.T) {
	needFallbacks(t)
	needTool(t, "pdftotext")
	needTool(t, "pdftoppm")
	r := fallbackRenderer(t, `{}`, nil)
	const run = "正常体字"
	draw := func(src string) (ink, string) {
		t.Helper()
		resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: basicTokens, page: "A6", numbering: stage.NumberingNone})
		w, h, px := rasterGray(t, resp.PDF, 300)
		return measureInk(w, h, px, 0, w), strings.TrimSpace(bodyText(t, resp.PDF))
	}
	regular, text := draw(run)
	if text != run {
		t.Fatalf("regular: text %q", text)
	}
	if regular.dark == 0 {
		t.Fatalf("regular: %+v", regular)
	}
	for _, tc := range []struct {
		src            string
		bold, oblique  bool
		sameLineHeight bool
	}{
		{"**" + run + "**", true, false, true},
		{"<b>" + run + "</b>", true, false, true},
		{"*" + run + "*", false, true, true},
		{"<em>" + run + "</em>", false, true, true},
		{"***" + run + "***", true, true, true},
	} {
		got, text := draw(tc.src)
		t.Logf("%s: %d dark pixels (regular %d), slant %.1f px (regular %.1f), ink x %d-%d (regular %d-%d)",
			tc.src, got.dark, regular.dark, got.slant, regular.slant, got.x0, got.x1, regular.x0, regular.x1)
		if text != run {
			t.Errorf("%s: text %q, want %q", tc.src, text, run)
		}
		ratio := float64(got.dark) / float64(regular.dark)
		if isBold := ratio > 1.3; isBold != tc.bold {
			t.Errorf("%s: %d dark pixels against %d regular (%.2fx), bold %v", tc.src, got.dark, regular.dark, ratio, tc.bold)
		}
		// 14 degrees over half the ink's height, ~40 px at 300 dpi:
		// about 5 px.
		if isOblique := got.slant-regular.slant > 3; isOblique != tc.oblique {
			t.Errorf("%s: slant %.1f px against %.1f regular, oblique %v", tc.src, got.slant, regular.slant, tc.oblique)
		}
		// The run keeps its advances and baseline: it starts where the
		// regular one does and takes its width, give or take the
		// stroke and the slant.
		if d := got.x0 - regular.x0; d < -4 || d > 4 {
			t.Errorf("%s: ink starts at x %d, regular at %d", tc.src, got.x0, regular.x0)
		}
		if d := got.x1 - regular.x1; d < -4 || d > 15 {
			t.Errorf("%s: ink ends at x %d, regular at %d", tc.src, got.x1, regular.x1)
		}
	}

	// A regular and a bold run of one fallback font on one line are two
	// runs: only the bold half is emboldened.
	resp := renderPDF(t, r, req{doc: markdownDoc(t, run+"**"+run+"**"), tokens: basicTokens, page: "A6", numbering: stage.NumberingNone})
	w, h, px := rasterGray(t, resp.PDF, 300)
	whole := measureInk(w, h, px, 0, w)
	mid := (whole.x0 + whole.x1) / 2
	left, right := measureInk(w, h, px, 0, mid), measureInk(w, h, px, mid, w)
	if float64(right.dark) < 1.3*float64(left.dark) || left.dark > regular.dark*11/10 {
		t.Errorf("regular then bold: %d dark pixels on the left (regular run alone: %d), %d on the right", left.dark, regular.dark, right.dark)
	}
	if got := strings.TrimSpace(bodyText(t, resp.PDF)); got != run+run {
		t.Errorf("regular then bold: text %q", got)
	}
}

// TestSyntheticOnlyForFallbacks: headings and table header cells in a
// fallback font are drawn bold (fill and stroke, text rendering mode 2),
// and nothing else is: text in the DejaVu faces, bold, italic and italic
// Arabic (drawn upright from Sans) included, is drawn as before, with no
// change of rendering mode or transform.
func TestSyntheticOnlyForFallbacks(t *testing.T) {
	needFallbacks(t)
	r := fallbackRenderer(t, `{"compress": false}`, nil)
	count := func(src string) int {
		t.Helper()
		resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: modernTokens, numbering: stage.NumberingNone})
		return strings.Count(string(resp.PDF), "\n2 Tr\n")
	}
	if n := count("# 标题\n\n| 表头 | 列 |\n|---|---|\n| 单元 | 格 |\n"); n != 3 {
		t.Errorf("a CJK heading and two header cells: %d runs drawn in mode 2, want 3", n)
	}
	if n := count("# Title\n\n**bold** *italic* ***both*** *مرحبا* `code`\n\n| head | b |\n|---|---|\n| c | d |\n"); n != 0 {
		t.Errorf("DejaVu text: %d runs drawn in mode 2, want none", n)
	}
}

// TestSyntheticStaysInMargins: long bold, oblique and bold-oblique CJK
// paragraphs and a table of them wrap as the regular text does: no word
// outside the margins, the text read back in order.
func TestSyntheticStaysInMargins(t *testing.T) {
	needFallbacks(t)
	needTool(t, "pdftotext")
	r := fallbackRenderer(t, `{}`, nil)
	sentence := "中文段落没有空格这是一个很长的句子用来测试换行是否正确处理。"
	long := strings.Repeat(sentence, 4)
	src := "**" + long + "**\n\n*" + long + "*\n\n正常" + "***" + long + "***\n\n" +
		"| **" + sentence + "** | *" + sentence + "* |\n|---|---|\n| ***" + sentence + "*** | x |\n"
	for _, page := range []string{"A4", "A6"} {
		for _, th := range themes {
			resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: th.tokens, page: page})
			m := scaledMargins(th.tokens.Margins, page)
			checkInsideMargins(t, pdfBoxes(t, resp.PDF), m, 1)
			// The ink too: past the advances only by the slant of a
			// glyph's top (a quarter of its height) and half a stroke.
			const dpi = 150
			w, h, px := rasterGray(t, resp.PDF, dpi)
			edge := int((w2pt(w, dpi) - m[1] + 0.3*th.tokens.FontSize) * dpi / 72)
			if ink := measureInk(w, h, px, edge, w); ink.dark > 0 {
				t.Errorf("%s %s: %d dark pixels right of the margin, from x %d (the margin and a third of an em: %d)", page, th.name, ink.dark, ink.x0, edge)
			}
			got := strings.Join(strings.Fields(bodyText(t, resp.PDF)), "")
			want := long + long + "正常" + long + sentence + sentence + sentence + "x"
			if got != want {
				t.Errorf("%s %s: text read back\n%q\nwant\n%q", page, th.name, got, want)
			}
		}
	}
}
