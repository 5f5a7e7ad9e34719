package layout

import (
	"sort"
	"strings"
	"testing"
)

// TestBidiOrder checks the display order of lines mixing directions: what
// a reader of each script sees left to right, as Chromium shows the same
// unmarked text in a left-to-right paragraph.
func TestBidiOrder(t *testing.T) {
	for _, tc := range []struct{ name, logical, display string }{
		{"latin untouched", "plain (text) 123", "plain (text) 123"},
		{"hebrew word", "שלום", "םולש"},
		{"hebrew after latin", "Hebrew: שלום עולם", "Hebrew: םלוע םולש"},
		{"number inside hebrew", "עם 2024 ו", "ו 2024 םע"},
		{"separators join numbers", "מחיר 1,000.50 ש", "ש 1,000.50 ריחמ"},
		{"brackets mirrored", "ו(סוגריים)", "(םיירגוס)ו"},
		{"brackets around latin stay", "ו (abc) ז", "ו (abc) ז"},
		{"brackets after latin stay", "see (שלום)", "see (םולש)"},
		{"marks go before their letter", "שָׁלוֹם", "םֹולָׁש"},
		{"arabic marks go before their letter", "بَ", "\u064E\uFE8F"},
		{"latin splits the hebrew run", "אב abc גד", "בא abc דג"},
		{"neutral between directions", "שלום - hello", "םולש - hello"},
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
