package layout

import (
	"strings"
	"testing"
)

// TestSoftHyphenBreak checks that a word too long for a line breaks at its
// soft hyphens, with a drawn "-", rather than between any two characters,
// and that a soft hyphen where no line breaks draws nothing.
func TestSoftHyphenBreak(t *testing.T) {
	syllable := "Donaudampf"
	word := strings.Repeat(syllable+"\u00ad", 40) + "end"
	d := lay(t, para(txt("short soft\u00adhyphenated "+word)))
	items := texts(d)
	if len(items) < 3 {
		t.Fatalf("want the word over several lines, got %d text items", len(items))
	}
	if got := items[0].Text; !strings.HasPrefix(got, "short softhyphenated ") {
		t.Errorf("first line %q: a soft hyphen inside a line must not be drawn", got)
	}
	for i, it := range items[:len(items)-1] {
		text := it.Text
		if i == 0 {
			text = strings.TrimPrefix(text, "short softhyphenated ")
		}
		body, ok := strings.CutSuffix(text, "-")
		if !ok || strings.ReplaceAll(body, syllable, "") != "" {
			t.Errorf("line %d %q: want whole syllables ending in a drawn hyphen", i+1, it.Text)
		}
	}
	if last := items[len(items)-1].Text; !strings.HasSuffix(last, syllable+"end") {
		t.Errorf("last line %q: want the word's end", last)
	}
}
