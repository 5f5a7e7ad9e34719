package emoji

import "testing"

func TestPresentedBMP(t *testing.T) {
	for i, g := range BMP {
		if g.Lo > g.Hi || i > 0 && g.Lo <= BMP[i-1].Hi {
			t.Errorf("range %d (%X-%X) is out of order", i, g.Lo, g.Hi)
		}
	}
	for r, want := range map[rune]bool{
		'⚡': true, '☕': true, '✅': true, '⭕': true, '⌚': true, '♈': true, '♓': true,
		'♥': false, '✔': false, '☺': false, '⚠': false, '©': false, 'a': false, '♔': false, '😀': false,
	} {
		if got := PresentedBMP(r); got != want {
			t.Errorf("PresentedBMP(%q) = %v", r, got)
		}
	}
}
