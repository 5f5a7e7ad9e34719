package render

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestHTMLTable: a raw HTML <table> is laid out as the same table written
// in Markdown is, word for word in the same places, as the themes style
// both alike on Chromium; it was a paragraph per row, its cells run
// together into one line. Block elements in a cell break its lines, a
// <th> outside the header row is bold, and a table whose cells hold
// Markdown, in HTML blocks of their own, keeps its words in order.
func TestHTMLTable(t *testing.T) {
	needTool(t, "pdftotext")
	needTool(t, "pdffonts")
	r := newRenderer(t, `{}`)
	words := func(md string) []bboxWord {
		t.Helper()
		resp := renderPDF(t, r, req{doc: markdownDoc(t, md), tokens: modernTokens, numbering: "none"})
		return pdfBoxes(t, resp.PDF)[0].Words
	}
	var gfm, raw strings.Builder
	gfm.WriteString("Before\n\n| Name | Amount |\n|---|--:|\n")
	raw.WriteString("Before\n\n<table>\n<thead><tr><th>Name</th><th align=\"right\">Amount</th></tr></thead>\n<tbody>\n")
	for i := range 5 {
		fmt.Fprintf(&gfm, "| item %d with a longer name | %d.00 |\n", i, i*250)
		fmt.Fprintf(&raw, "<tr>\n  <td>item %d with a longer name</td>\n  <td align=\"right\">%d.00</td>\n</tr>\n", i, i*250)
	}
	gfm.WriteString("\nAfter\n")
	raw.WriteString("</tbody>\n</table>\n\nAfter\n")
	want, got := words(gfm.String()), words(raw.String())
	if len(got) != len(want) {
		t.Fatalf("%d words, want the Markdown table's %d:\n%v\n%v", len(got), len(want), got, want)
	}
	for i := range want {
		w, g := want[i], got[i]
		if g.Text != w.Text || math.Abs(g.X0-w.X0) > 0.5 || math.Abs(g.Y0-w.Y0) > 0.5 {
			t.Errorf("word %d: %q at (%.1f,%.1f), want %q at (%.1f,%.1f)", i, g.Text, g.X0, g.Y0, w.Text, w.X0, w.Y0)
		}
	}

	at := map[string]bboxWord{}
	for _, w := range words("<table><tr><th>Left</th><th>Right</th></tr>" +
		"<tr><td><p>One</p><p>Two</p></td><td>Three<br>Four</td></tr>" +
		"<tr><th>Side</th><td>Five</td></tr></table>\n") {
		at[w.Text] = w
	}
	if one, two, three := at["One"], at["Two"], at["Three"]; !(two.Y0 > one.Y1 && math.Abs(two.X0-one.X0) < 0.5 && math.Abs(three.Y0-one.Y0) < 0.5) {
		t.Errorf("paragraphs in a cell: One %+v, Two %+v, Three %+v; want Two under One, Three beside One", one, two, three)
	}
	if left, right := at["Left"], at["Right"]; math.Abs(left.Y0-right.Y0) > 0.5 || right.X0 <= left.X1 {
		t.Errorf("header cells not side by side: %+v %+v", left, right)
	}

	resp := renderPDF(t, r, req{doc: markdownDoc(t, "<table><tr><th>Side</th><td>Five</td></tr></table>\n"), tokens: modernTokens, numbering: "none"})
	if f := pdfFonts(t, resp.PDF); !strings.Contains(fmt.Sprint(f), "Bold") {
		t.Errorf("a <th> in a body row is not bold: fonts %v", f)
	}

	text := strings.Join(strings.Fields(readingText(t, renderPDF(t, r, req{
		doc:    markdownDoc(t, "<table>\n<tr>\n<td>\n\n**Markdown** in a cell\n\n</td>\n<td>second</td>\n</tr>\n</table>\n\nAfter\n"),
		tokens: modernTokens, numbering: "none",
	}).PDF)), " ")
	if text != "Markdown in a cell second After" {
		t.Errorf("a table with Markdown in its cells printed %q", text)
	}
}

// TestHTMLTableHiddenMarkup: a table tag inside an element that draws
// nothing (<style>, <svg>, <script>) is that element's text, as
// Chromium reads it and as the check that the block's tables end counts
// it; the table counted it as a nested table, never ended, and was dropped
// with the rest of its block, silently.
func TestHTMLTableHiddenMarkup(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	for _, cell := range []string{
		`<style>/* <table> */ td { color: red }</style>`,
		`<svg><table></svg>`,
		`<script>document.write("<table><tr><td>")</script>`,
	} {
		md := "<table><tr><td>One" + cell + "</td><td>Two</td></tr></table>\n<p>Three</p>\n\nAfter\n"
		text := strings.Join(strings.Fields(readingText(t, renderPDF(t, r, req{
			doc: markdownDoc(t, md), tokens: modernTokens, numbering: "none",
		}).PDF)), " ")
		for _, w := range []string{"One", "Two", "Three", "After"} {
			if !strings.Contains(text, w) {
				t.Errorf("%s in a cell: printed %q, without %q", cell, text, w)
			}
		}
		if strings.Contains(text, "table") || strings.Contains(text, "red") {
			t.Errorf("%s in a cell: printed %q, with the hidden element's text", cell, text)
		}
	}
}
