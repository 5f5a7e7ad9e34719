package render

import (
	"bytes"
	"context"
	"maps"
	"math"
	"slices"
	"testing"
)

// wordAlign says where a word sits in the text column: "left", "center"
// or "right" (its edge or centre within a point of the column's), or
// "elsewhere".
func wordAlign(w bboxWord, pageW float64) string {
	m := modernTokens.Margins
	left, right := m[3], pageW-m[1]
	switch {
	case math.Abs(w.X0-left) < 1:
		return "left"
	case math.Abs((w.X0+w.X1)/2-(left+right)/2) < 1:
		return "center"
	case math.Abs(w.X1-right) < 1:
		return "right"
	}
	return "elsewhere"
}

// TestHTMLAlignCarries: a README opens <div align="center"> (or <p>, <h1>
// with align) in one HTML block, puts Markdown after a blank line and
// closes the element in a later HTML block; the browser centres the
// Markdown between, and so must this backend. Each paragraph is one word
// found with pdftotext -bbox.
func TestHTMLAlignCarries(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	for _, tc := range []struct {
		name, md string
		want     map[string]string // word -> where it sits
	}{
		{"div", "<div align=\"center\">\n\nInside\n\n</div>\n\nAfter\n",
			map[string]string{"Inside": "center", "After": "left"}},
		// The Markdown paragraph's own <p> closes the open one, so Chromium
		// leaves it at the left; what is not in a <p> is centred.
		{"p", "<p align=\"center\">\n\nInside\n\n</p>\n\nAfter\n",
			map[string]string{"Inside": "left", "After": "left"}},
		{"p around html", "<p align=\"center\">\n\n<span>\nInside</span>\n\n</p>\n\nAfter\n",
			map[string]string{"Inside": "center", "After": "left"}},
		{"p closed by a heading", "<p align=\"right\">\n\n# Heading\n\n<span>After</span>\n\n</p>\n",
			map[string]string{"Heading": "left", "After": "left"}},
		{"h1", "<h1 align=\"center\">\n\nInside\n\n</h1>\n\nAfter\n",
			map[string]string{"Inside": "center", "After": "left"}},
		{"center tag", "<center>\n\nInside\n\n</center>\n\nAfter\n",
			map[string]string{"Inside": "center", "After": "left"}},
		{"heading inside", "<div align=\"center\">\n\n# Heading\n\n</div>\n\nAfter\n",
			map[string]string{"Heading": "center", "After": "left"}},
		{"nested", "<div align=\"center\">\n\nOuter\n\n<div align=\"right\">\n\nInner\n\n</div>\n\nOuterAgain\n\n</div>\n\nAfter\n",
			map[string]string{"Outer": "center", "Inner": "right", "OuterAgain": "center", "After": "left"}},
		{"nested inherits", "<div align=\"right\">\n\n<div>\n\nInner\n\n</div>\n\nOuter\n\n</div>\n\nAfter\n",
			map[string]string{"Inner": "right", "Outer": "right", "After": "left"}},
		{"unclosed", "Before\n\n<div align=\"center\">\n\nFirst\n\nSecond\n",
			map[string]string{"Before": "left", "First": "center", "Second": "center"}},
		{"stray end tag", "</div>\n\n<div align=\"center\">\n\nInside\n\n</p>\n\nStill\n\n</div>\n\nAfter\n",
			map[string]string{"Inside": "center", "Still": "center", "After": "left"}},
		{"p closed by a block", "<p align=\"center\">Centred\n<div>\n\nAfter\n\n</div>\n",
			map[string]string{"Centred": "center", "After": "left"}},
		// A div opened in a quote ends with the quote, as the browser ends
		// it at </blockquote>; one opened around the quote reaches into it.
		// Quoted is centred in the quote's column, which starts where
		// Plain does.
		{"ends with its quote", "> Plain\n\n<!-- -->\n\n> <div align=\"center\">\n>\n> Quoted\n\nAfter\n",
			map[string]string{"Plain": "elsewhere", "Quoted": "elsewhere", "After": "left"}},
		{"reaches into a quote", "<div align=\"right\">\n\n> Quoted\n\nAfter\n\n</div>\n\nLast\n",
			map[string]string{"Quoted": "right", "After": "right", "Last": "left"}},
		{"ends with its list item", "- <div align=\"right\">\n\n  Item\n- Next\n\nAfter\n",
			map[string]string{"Item": "right", "Next": "elsewhere", "After": "left"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := renderPDF(t, r, req{doc: markdownDoc(t, tc.md), tokens: modernTokens})
			got, boxes := map[string]string{}, map[string]bboxWord{}
			pageW := 0.0
			for _, p := range pdfBoxes(t, resp.PDF) {
				pageW = p.W
				for _, w := range p.Words {
					if _, ok := tc.want[w.Text]; ok {
						got[w.Text], boxes[w.Text] = wordAlign(w, p.W), w
					}
				}
			}
			if q, ok := boxes["Quoted"]; ok && tc.want["Plain"] != "" {
				right := pageW - modernTokens.Margins[1]
				if c := (boxes["Plain"].X0 + right) / 2; math.Abs((q.X0+q.X1)/2-c) > 1 {
					t.Errorf("Quoted centred on %.1f, want the quote's centre %.1f", (q.X0+q.X1)/2, c)
				}
			}
			for _, word := range slices.Sorted(maps.Keys(tc.want)) {
				if got[word] != tc.want[word] {
					t.Errorf("%q sits %q, want %q", word, got[word], tc.want[word])
				}
			}
		})
	}
}

// TestHTMLAlignCarriesImages: the logo and badges of a README header,
// Markdown images between <div align="center"> and </div>, are centred
// like the text (pdftoppm finds the logo's red ink).
func TestHTMLAlignCarriesImages(t *testing.T) {
	needTool(t, "pdftoppm")
	r := newRenderer(t, `{}`)
	md := "<div align=\"center\">\n\n![logo](" + redPNG(t, 200, 80) + ")\n\nTagline\n\n</div>\n"
	resp := renderPDF(t, r, req{doc: markdownDoc(t, md), tokens: modernTokens})
	x0, _, x1, _, w, ok := redInk(t, resp.PDF)
	if !ok {
		t.Fatal("the logo is not on the page")
	}
	m := modernTokens.Margins
	if want := m[3] + (float64(w)-m[1]-m[3]-150)/2; math.Abs(float64(x1-x0)-150) > 2 || math.Abs(float64(x0)-want) > 2 {
		t.Errorf("logo at x=%d-%d, want 150 pt from %.1f", x0, x1, want)
	}
}

// TestRenderPartsCarryAlign: the parse may cut its parts between the HTML
// block that opens a centred div and the one that closes it; laid out in
// parts, however cut, the document is the PDF of the whole tree, whose
// tagline is centred.
func TestRenderPartsCarryAlign(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	logo := redPNG(t, 200, 80)
	md := "# Project\n\n<div align=\"center\">\n\n![logo](" + logo + ")\n\nTagline\n\n" +
		"<p align=\"right\">\n\n## Right heading\n\nRight text\n\n</p>\n\n> <div align=\"left\">\n>\n> quoted\n\n" +
		"- item <img src=\"" + logo + "\" width=\"50%\">\n\n</div>\n\nLeft again\n\n<center>\n\nunclosed to the end\n"
	d := markdownDoc(t, md)
	want := renderPDF(t, r, req{doc: d, tokens: modernTokens})
	centred := false
	for _, p := range pdfBoxes(t, want.PDF) {
		for _, w := range p.Words {
			centred = centred || w.Text == "Tagline" && wordAlign(w, p.W) == "center"
		}
	}
	if !centred {
		t.Error("the tagline is not centred")
	}
	all := splits(d.Root.Children, 42)
	for _, name := range slices.Sorted(maps.Keys(all)) {
		resp, err := r.RenderParts(context.Background(), partsRequest(t, req{tokens: modernTokens}), partsOf(d, all[name]))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(resp.PDF, want.PDF) || resp.Pages != want.Pages {
			t.Errorf("%s: %d pages, %d bytes; the whole tree: %d pages, %d bytes", name, resp.Pages, len(resp.PDF), want.Pages, len(want.PDF))
		}
	}
}
