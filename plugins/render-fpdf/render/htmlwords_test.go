package render

import (
	"math"
	"strings"
	"testing"
)

// TestHTMLListsAndQuotes: the words Chromium prints for raw HTML that are
// not in its text, an <ol>'s item numbers, a <ul>'s bullets and a <q>'s
// quotation marks, are printed here too, in the same places.
func TestHTMLListsAndQuotes(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	for _, tc := range []struct {
		name, md, want string
	}{
		{"ol", "<ol>\n<li>First</li>\n<li>Second</li>\n</ol>\n\nAfter\n",
			"1. First 2. Second After"},
		{"ol start", "<ol start=\"7\"><li>Seventh</li><li>Eighth</li></ol>\n",
			"7. Seventh 8. Eighth"},
		// Numbered in the counter style <ol type> names, from any start,
		// zero and negative ones too, as Chromium prints them; roman
		// numerals fall back to decimal below 1, letters too.
		{"ol type i", "<ol type=\"i\"><li>One</li><li>Two</li><li>Three</li><li>Four</li></ol>\n",
			"i. One ii. Two iii. Three iv. Four"},
		{"ol type A start", "<ol type=\"A\" start=\"26\"><li>Zed</li><li>Next</li></ol>\n",
			"Z. Zed AA. Next"},
		{"ol type I from 0", "<ol type=\"I\" start=\"0\"><li>Zero</li><li>One</li></ol>\n",
			"0. Zero I. One"},
		{"ol negative start", "<ol start=\"-2\"><li>Minus</li><li>Less</li><li>Zero</li></ol>\n",
			"-2. Minus -1. Less 0. Zero"},
		{"ol reversed", "<ol type=\"a\" reversed><li>C<ol><li>Inner</li><li>Inner</li></ol></li><li>B</li><li>A</li></ol>\n",
			"c. C 1. Inner 2. Inner b. B a. A"},
		{"ol reversed start", "<ol reversed start=\"1\"><li>One</li><li>Zero</li></ol>\n",
			"1. One 0. Zero"},
		{"li value", "<ol><li>One</li><li value=\"10\">Ten</li><li>Eleven</li></ol>\n",
			"1. One 10. Ten 11. Eleven"},
		{"ul nested", "<ul>\n<li>Outer\n<ul><li>Inner</li></ul>\n</li>\n<li>Next</li>\n</ul>\n",
			"• Outer ◦ Inner • Next"},
		// The list opens in one HTML block and closes in a later one,
		// with Markdown between, as READMEs write them.
		{"across blocks", "<ol>\n<li>\n\n**Bold** item\n\n</li>\n<li>\n\nPlain item\n\n</li>\n</ol>\n\nAfter\n",
			"1. Bold item 2. Plain item After"},
		{"inside a Markdown list", "- Item\n  <ol><li>Nested</li></ol>\n- Next\n",
			"• Item 1. Nested • Next"},
		{"q", "She said <q>hello <q>there</q> friend</q> twice.\n",
			"She said “hello ‘there’ friend” twice."},
		{"q left open", "A <b><q>quoted</b> word.\n",
			"A “quoted” word."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := renderPDF(t, r, req{doc: markdownDoc(t, tc.md), tokens: modernTokens, numbering: "none"})
			got := strings.Join(strings.Fields(readingText(t, resp.PDF)), " ")
			if got != tc.want {
				t.Errorf("printed %q, want %q", got, tc.want)
			}
		})
	}

	// Items are indented as a list's are, and a closed list gives the
	// column back.
	resp := renderPDF(t, r, req{doc: markdownDoc(t, "Before\n\n<ul><li>Item</li></ul>\n\nAfter\n"), tokens: modernTokens, numbering: "none"})
	x := map[string]float64{}
	for _, p := range pdfBoxes(t, resp.PDF) {
		for _, w := range p.Words {
			x[w.Text] = w.X0
		}
	}
	if x["Item"] <= x["Before"]+5 {
		t.Errorf("the item starts at x %.1f, not indented from %.1f", x["Item"], x["Before"])
	}
	if math.Abs(x["After"]-x["Before"]) > 0.5 {
		t.Errorf("after the list, text starts at x %.1f, want %.1f", x["After"], x["Before"])
	}
}

// TestMarginFreeHTMLLines: a line of an HTML block outside any block
// element (a lone <br />) or in a <div> has no margin under it, as
// Chromium lays out an anonymous block and a <div>, and a list in a list
// item none either (li > ul): the next block follows on the next line;
// one in a quote or a <div> in a list item has its margin.
// fpdf put a paragraph gap under each, so large.md's <br /> between a
// nested list and a code block, in a list item, took two gaps (19 pt)
// more than Chromium gives it.
func TestMarginFreeHTMLLines(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	tk := modernTokens
	line, gap := tk.FontSize*tk.LineHeight, tk.ParagraphSpacing
	for _, tc := range []struct {
		name, md, from, to string
		// want is how far below from's line to's starts.
		want float64
	}{
		{"lone br", "Lead para.\n\n<br />\n\nAfter para.\n", "Lead", "After", 2*line + gap},
		{"div", "Lead para.\n\n<div>Div line</div>\n\nAfter para.\n", "Div", "After", line},
		{"nested list", "- Item one\n\n    - alpha\n    - bigint\n\n    After para.\n\n- Item two\n", "bigint", "After", line},
		{"br in a list item", "- Item one\n\n    - alpha\n    - bigint\n\n    <br />\n\n    After para.\n\n- Item two\n", "bigint", "After", 2 * line},
		// A list in a quote or a <div> in a list item is not li > ul:
		// it has its margin, as at the top level.
		{"list in a quote in a list item", "- Item one\n\n    > - alpha\n    > - bigint\n    >\n    > After para.\n\n- Item two\n", "bigint", "After", line + gap},
		{"list in a div in a list item", "- Item one\n\n    <div>\n\n    - alpha\n    - bigint\n\n    </div>\n\n    After para.\n\n- Item two\n", "bigint", "After", line + gap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := renderPDF(t, r, req{doc: markdownDoc(t, tc.md), tokens: tk, numbering: "none"})
			words := map[string]bboxWord{}
			for _, w := range pdfBoxes(t, resp.PDF)[0].Words {
				words[w.Text] = w
			}
			from, to := words[tc.from], words[tc.to]
			if from.Text == "" || to.Text == "" {
				t.Fatalf("words read back: %v", words)
			}
			if got := to.Y0 - from.Y0; math.Abs(got-tc.want) > 1 {
				t.Errorf("%s is %.2f below %s, want %.2f", tc.to, got, tc.from, tc.want)
			}
		})
	}
}
