package layout

import (
	"sort"
	"strings"
	"testing"
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
