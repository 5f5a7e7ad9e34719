package layout

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestBidiOrder checks the display order of lines mixing directions: what
// a reader of each script sees left to right, as Chromium shows the same
// text in a paragraph with dir="auto": right to left when its first strong
// character is, as in the paragraphs that start with Hebrew here.
func TestBidiOrder(t *testing.T) {
	for _, tc := range []struct{ name, logical, display string }{
		{"latin untouched", "plain (text) 123", "plain (text) 123"},
		{"hebrew word", "שלום", "םולש"},
		{"hebrew after latin", "Hebrew: שלום עולם", "Hebrew: םלוע םולש"},
		{"number inside hebrew", "עם 2024 ו", "ו 2024 םע"},
		{"separators join numbers", "מחיר 1,000.50 ש", "ש 1,000.50 ריחמ"},
		{"brackets mirrored", "ו(סוגריים)", "(םיירגוס)ו"},
		{"brackets around latin stay", "x ו (abc) ז", "x ו (abc) ז"},
		{"brackets around latin in hebrew", "ו (abc) ז", "ז (abc) ו"},
		{"brackets after latin stay", "see (שלום)", "see (םולש)"},
		{"marks go before their letter", "שָׁלוֹם", "םֹולָׁש"},
		{"arabic marks go before their letter", "بَ", "\u064E\uFE8F"},
		{"latin splits the hebrew run", "x אב abc גד", "x בא abc דג"},
		{"latin inside hebrew", "אב abc גד", "דג abc בא"},
		{"neutral between directions", "x שלום - hello", "x םולש - hello"},
		{"neutral between directions in hebrew", "שלום - hello", "hello - םולש"},
		{"full stop ends hebrew", "שלום עולם.", ".םלוע םולש"},
		{"full stop ends hebrew in latin", "x שלום עולם.", "x םלוע םולש."},
		{"number starts hebrew", "2024 היא שנה.", ".הנש איה 2024"},
		{"latin first after a number", "2024 is שנה.", "2024 is הנש."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := displayOrder(t, tc.logical); got != tc.display {
				t.Errorf("display order of %q = %q, want %q", tc.logical, got, tc.display)
			}
		})
	}
}

// displayOrder lays s out as a paragraph and reads its text runs left to
// right.
func displayOrder(t *testing.T, s string) string {
	items := texts(lay(t, para(txt(s))))
	sort.SliceStable(items, func(i, j int) bool { return items[i].X < items[j].X })
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.Text)
	}
	return b.String()
}

// TestTableDirection checks that a table takes its container's direction,
// as Chromium lays out a table, which has no dir of its own: in a
// right-to-left quote or <div dir="rtl"> the first column is on the right,
// the table against the right edge, and a cell without an alignment of
// its own is right-aligned; elsewhere it stays left to right.
func TestTableDirection(t *testing.T) {
	html := func(s string) *stage.Node { return &stage.Node{Kind: stage.KindHTMLBlock, Text: s} }
	table := func(align string) *stage.Node {
		cell := func(s string) *stage.Node { return with(n(stage.KindTableCell, txt(s)), "align", align) }
		return n(stage.KindTable,
			n(stage.KindTableHead, cell("a long header"), cell("second")),
			n(stage.KindTableRow, cell("x"), cell("y")))
	}
	quote := func(c ...*stage.Node) *stage.Node { return n(stage.KindBlockquote, c...) }
	for _, tc := range []struct {
		name  string
		nodes []*stage.Node
		rtl   bool
		align string
	}{
		{"top level", []*stage.Node{table("")}, false, ""},
		{"arabic cells at top level", []*stage.Node{para(txt("مرحبا")), table("")}, false, ""},
		{"div dir=rtl", []*stage.Node{html(`<div dir="rtl">`), table(""), html("</div>")}, true, ""},
		{"after the div closes", []*stage.Node{html(`<div dir="rtl">`), html("</div>"), table("")}, false, ""},
		{"div dir=ltr inside", []*stage.Node{html(`<div dir="rtl">`), html(`<div dir="ltr">`), table("")}, false, ""},
		{"div without dir inside", []*stage.Node{html(`<div dir="RTL">`), html(`<div align="center">`), table("")}, true, ""},
		{"right-to-left quote", []*stage.Node{quote(para(txt("اقتباس")), table(""))}, true, ""},
		{"left-to-right quote in a div dir=rtl", []*stage.Node{html(`<div dir="rtl">`), quote(para(txt("quote")), table(""))}, false, ""},
		{"div dir=ltr in a right-to-left quote", []*stage.Node{quote(para(txt("اقتباس")), html(`<div dir="ltr">`), table(""))}, false, ""},
		{"explicit left alignment", []*stage.Node{html(`<div dir="rtl">`), table("left")}, true, "left"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := lay(t, tc.nodes...)
			head, second, x := find(t, d, "a long header"), find(t, d, "second"), find(t, d, "x")
			if got := head.X > second.X; got != tc.rtl {
				t.Errorf("first column at %.1f, second at %.1f: right to left %v, want %v", head.X, second.X, got, tc.rtl)
			}
			// The column's right edge: the page's, or where the quote's
			// right-aligned paragraph ends.
			edge := d.Content.X1
			for _, p := range texts(d) {
				if p.Text == "ﺱﺎﺒﺘﻗﺍ" {
					edge = p.X + textWidth(t, p.Item)
				}
			}
			right := 0.0
			for _, s := range items(d, Stroke) {
				right = max(right, s.X+s.W)
			}
			if atRight := math.Abs(right-edge) < 0.5; atRight != tc.rtl {
				t.Errorf("table's right edge at %.1f, column's at %.1f: against it %v, want %v", right, edge, atRight, tc.rtl)
			}
			if rightAligned := x.X > head.X+1; rightAligned != (tc.rtl && tc.align == "") {
				t.Errorf("cell x at %.1f under its header at %.1f: right-aligned %v", x.X, head.X, rightAligned)
			}
		})
	}
}

// textWidth is the advance of a text item.
func textWidth(t *testing.T, it Item) float64 {
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	w := 0
	for _, r := range it.Text {
		w += set.Face(it.Face).Width(r)
	}
	return float64(w) * it.Size / 1000
}
