package layout

import (
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestArabicShaping checks that Arabic letters are drawn in the shape
// their neighbours call for: each case's text, laid out, reads as its
// presentation forms (given in logical order) laid out.
func TestArabicShaping(t *testing.T) {
	for _, tc := range []struct{ name, logical, shaped string }{
		{"isolated", "ب", "\uFE8F"},
		{"initial and final", "بب", "\uFE91\uFE90"},
		{"medial", "ببب", "\uFE91\uFE92\uFE90"},
		{"right-joining alef ends the join", "باب", "\uFE91\uFE8E\uFE8F"},
		{"word", "مرحبا", "\uFEE3\uFEAE\uFEA3\uFE92\uFE8E"},
		{"lam-alef isolated", "لا", "\uFEFB"},
		{"lam-alef final", "سلام", "\uFEB3\uFEFC\uFEE1"},
		{"lam-alef with hamza", "لأ", "\uFEF7"},
		{"mark between letters", "بَب", "\uFE91\u064E\uFE90"},
		{"mark between lam and alef", "لَا", "\uFEFB\u064E"},
		{"non-joining hamza", "ءب", "\u0621\uFE8F"},
		{"digits do not join", "ب12ب", "\uFE8F12\uFE8F"},
		{"arabic-indic digits do not join", "ب٣ب", "\uFE8F٣\uFE8F"},
		{"tatweel joins both sides", "بـب", "\uFE91\u0640\uFE90"},
		{"zwnj breaks the join", "ب\u200Cب", "\uFE8F\uFE8F"},
		{"zwj makes a join", "ب\u200D", "\uFE91"},
		{"persian letters", "پیک", "\uFB58\uFBFF\uFB8F"},
		{"words shaped apart", "بب بب", "\uFE91\uFE90 \uFE91\uFE90"},
		{"latin untouched", "abc ب", "abc \uFE8F"},
		{"zwj outside arabic is not drawn", "a\u200Db", "ab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, want := displayOrder(t, tc.logical), displayOrder(t, tc.shaped)
			if got != want {
				t.Errorf("%q is drawn %+q, want %+q", tc.logical, got, want)
			}
		})
	}
}

// TestArabicShapingAcrossStyles checks that a style change inside a word
// keeps its letters joined, and that italic Arabic, which no oblique
// DejaVu face has, is drawn by the upright one rather than as U+FFFD.
func TestArabicShapingAcrossStyles(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind stage.Kind
	}{{"bold", stage.KindStrong}, {"italic", stage.KindEmphasis}} {
		t.Run(tc.name, func(t *testing.T) {
			d := lay(t, para(txt("ب"), n(tc.kind, txt("بب"))))
			find(t, d, "\uFE91")       // the plain beh starts the word
			find(t, d, "\uFE90\uFE92") // the styled ones, in display order
			for _, it := range texts(d) {
				for _, r := range it.Text {
					if r == replacement {
						t.Errorf("text %q holds U+FFFD", it.Text)
					}
				}
			}
		})
	}
}

// TestActual checks that each presentation form shape draws maps back to
// the one letter it stands for, a lam-alef ligature to alef then lam (the
// display order it is drawn in), that the brackets of reversed text are
// mirrored back, and that other text is left alone.
func TestActual(t *testing.T) {
	seen := map[rune]rune{}
	for letter, forms := range positionalForms {
		for _, f := range forms {
			if f == 0 {
				continue
			}
			if other, ok := seen[f]; ok {
				t.Errorf("U+%04X is a form of both U+%04X and U+%04X", f, other, letter)
			}
			seen[f] = letter
			if got := Actual(string(f), false); got != string(letter) {
				t.Errorf("Actual(U+%04X) = %+q, want %+q", f, got, string(letter))
			}
		}
	}
	for alef, forms := range lamAlefForms {
		for _, f := range forms {
			if got, want := Actual(string(f), false), string([]rune{alef, 'ل'}); got != want {
				t.Errorf("Actual(U+%04X) = %+q, want %+q", f, got, want)
			}
		}
	}
	for _, tc := range []struct {
		drawn    string
		reversed bool
		want     string
	}{
		{"abc 123 (x)", false, "abc 123 (x)"},
		{"(םולש)", false, "(םולש)"},
		{"(םולש)", true, ")םולש("},
		{"«\uFE8F» [x] {y} <z>", true, "»ب« ]x[ }y{ >z<"},
		{"ب\u064E", false, "ب\u064E"},
		{"\uFDF2", false, "\uFDF2"},
	} {
		if got := Actual(tc.drawn, tc.reversed); got != tc.want {
			t.Errorf("Actual(%+q, %v) = %+q, want %+q", tc.drawn, tc.reversed, got, tc.want)
		}
		if got := standsForOther(tc.drawn, tc.reversed); got != (tc.want != tc.drawn) {
			t.Errorf("standsForOther(%+q, %v) = %v", tc.drawn, tc.reversed, got)
		}
	}
}
