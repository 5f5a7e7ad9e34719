package render

import (
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestTableHeaderInHeadingColour reads the colour of a table's header
// cells off the page: the heading colour, as modern's th { color:
// var(--md-heading) } prints it on Chromium (basic's th takes the text
// colour, which is its heading colour), for a Markdown table and a raw
// HTML one; the body cells keep the text colour. The header printed in
// the text colour.
func TestTableHeaderInHeadingColour(t *testing.T) {
	needTool(t, "pdftotext")
	needTool(t, "pdftoppm")
	r := newRenderer(t, `{}`)
	src := "| Headword | Other |\n|---|---|\n| bodyword | cell |\n\n" +
		"<table><tr><th>Htmlhead</th></tr><tr><td>htmlbody</td></tr></table>\n"
	resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: modernTokens, numbering: stage.NumberingNone})
	const dpi = 144
	w, h, px := rasterRGB(t, resp.PDF, dpi)
	heading := colour{0x0b, 0x3d, 0x91, 24}
	found := map[string]bool{}
	for _, word := range pdfBoxes(t, resp.PDF)[0].Words {
		n := countNear(w, h, px, dpi, word.X0, word.Y0, word.X1, word.Y1, heading)
		switch word.Text {
		case "Headword", "Htmlhead":
			found[word.Text] = true
			if n < 20 {
				t.Errorf("header %q: %d pixels of the heading colour", word.Text, n)
			}
		case "bodyword", "htmlbody":
			found[word.Text] = true
			if n > 0 {
				t.Errorf("body cell %q: %d pixels of the heading colour", word.Text, n)
			}
		}
	}
	if len(found) != 4 {
		t.Fatalf("read back %v of the four cells", found)
	}
}
