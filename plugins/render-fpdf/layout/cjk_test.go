package layout

import "testing"

func TestBreakBetween(t *testing.T) {
	for _, tc := range []struct {
		a, b rune
		want bool
	}{
		{'中', '文', true},
		{'한', '국', true},
		{'の', 'テ', true},
		{'o', '中', true},
		{'中', 'a', true},
		{'a', 'b', false},
		{'é', 'ж', false},
		{'中', '。', false}, // no line starts with closing punctuation
		{'中', '、', false},
		{'中', 'ー', false},
		{'テ', 'ッ', false}, // small kana
		{'中', '）', false},
		{'中', ',', false},
		{'「', '中', false}, // no line ends with opening punctuation
		{'(', '中', false},
		{'。', '中', true},
		{'」', '中', true},
		{'d', '⌚', true}, // emoji of UAX #14's ID and EB classes, as Chromium breaks
		{'⌚', 'w', true},
		{'a', '☕', true},
		{'✊', 'b', true},
		{'❤', 'x', true},
		{'⌚', '.', false},
		{'a', '✅', false}, // AL, a letter to a line breaker
		{'✅', 'a', false},
		{'a', '⚠', false},
		{'a', '✨', false},
		{'a', '→', false},
	} {
		if got := breakBetween(tc.a, tc.b); got != tc.want {
			t.Errorf("breakBetween(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
