package chrome

import (
	"fmt"
	"strings"
	"testing"
)

// wordHeight is the height of the first word that is text, or 0.
func wordHeight(words []bboxWord, text string) float64 {
	for _, w := range words {
		if w.text == text {
			return w.yMax - w.yMin
		}
	}
	return 0
}

// A table wider than the page, of many columns or of one long URL, is read
// whole: its last columns are on the page, not cut at its edge, and the
// rest of the document keeps its type size (Chromium shrank every page to
// make room). A table that fits keeps its words whole.
func TestWideTablesFitThePage(t *testing.T) {
	r := sharedRenderer(t)
	const css = `td, th { border: 1px solid #888; padding: 2pt 6pt; }`
	var wide strings.Builder
	wide.WriteString("<table><tr>")
	for c := range 12 {
		fmt.Fprintf(&wide, "<th>Column%dHeader</th>", c)
	}
	wide.WriteString("</tr><tr>")
	for c := range 12 {
		fmt.Fprintf(&wide, "<td>value%dENDCELL</td>", c)
	}
	wide.WriteString("</tr></table>")
	url := "https://example.com/" + strings.Repeat("segment", 30) + "/ENDURL"
	long := "<table><tr><th>link</th><th>note</th></tr><tr><td>" + url + "</td><td>LASTCOLUMN</td></tr></table>"
	fits := "<table><tr><th>option</th><th>description</th></tr><tr><td><code>parser.WithIDs</code></td><td>" +
		strings.Repeat("allows you to change how element ids are made; ", 6) + "</td></tr></table>"
	const para = "<p>Zqmarker paragraph of body text.</p>"

	plain, _, _ := pdfWords(t, render(t, r, doc{css: css, body: para}).PDF)
	want := wordHeight(plain, "Zqmarker")
	for _, tc := range []struct {
		name, table string
		whole       []string // in the text, in order, spaces dropped
	}{
		{"many columns", wide.String(), []string{"Column0Header", "Column11Header", "value0ENDCELL", "value11ENDCELL"}},
		{"long URL", long, []string{url, "LASTCOLUMN"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pdf := render(t, r, doc{css: css, body: para + tc.table}).PDF
			text := strings.Join(strings.Fields(run(t, "pdftotext", "-raw", writePDF(t, pdf), "-")), "")
			for _, s := range tc.whole {
				if !strings.Contains(text, s) {
					t.Errorf("%q is not in the PDF's text, cut at the page's edge:\n%s", s, text)
				}
			}
			words, width, _ := pdfWords(t, pdf)
			for _, w := range words {
				if w.xMax > width-54+1 {
					t.Errorf("%q ends at %.1f pt, in the right margin (page %.1f pt wide)", w.text, w.xMax, width)
				}
			}
			if got := wordHeight(words, "Zqmarker"); got < want-0.1 {
				t.Errorf("body text %.2f pt high beside the table, %.2f pt alone: the document was shrunk", got, want)
			}
		})
	}
	// The page's width is the document's: its own @page margins count.
	t.Run("user margins", func(t *testing.T) {
		table := "<table><tr>" + strings.Repeat("<td>valueENDCELLxx</td>", 4) + "</tr></table>"
		pdf := render(t, r, doc{css: css + `@page { margin-left: 150pt; margin-right: 150pt; }`, body: table}).PDF
		words, width, _ := pdfWords(t, pdf)
		for _, w := range words {
			if w.xMax > width-150+1 {
				t.Errorf("%q ends at %.1f pt, in the right margin of 150 pt (page %.1f pt wide)", w.text, w.xMax, width)
			}
		}
	})
	t.Run("table that fits", func(t *testing.T) {
		words, _, _ := pdfWords(t, render(t, r, doc{css: css, body: fits}).PDF)
		if wordHeight(words, "parser.WithIDs") == 0 {
			t.Errorf("parser.WithIDs was broken in a table that fits the page: %v", words[:min(8, len(words))])
		}
	})
}
