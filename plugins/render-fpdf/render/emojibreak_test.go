package render

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestBMPEmojiOpenLineBreaks lays out paragraphs of words joined by emoji
// of the BMP and no space. Those of UAX #14's ID and EB classes (⌚ ☕ ❤
// ✊, emoji or DejaVu text) open a break on either side, as Chromium
// breaks there: every line ends at an emoji and no word is cut. ✅ is AL,
// as a letter is, and Chromium keeps it with its words (the paragraph is
// one word it cuts between characters to fit); so does this backend.
func TestBMPEmojiOpenLineBreaks(t *testing.T) {
	needEmojiFont(t)
	needTool(t, "pdftotext")
	word := regexp.MustCompile(`^w[a-z]{3}\d\d$`)
	r := emojiRenderer(t, SystemEmoji)
	for _, sep := range []string{"⌚", "☕", "❤", "❤️", "✊"} {
		t.Run(sep, func(t *testing.T) {
			var ws []string
			for i := range 60 {
				ws = append(ws, "word"+itoa(100 + i)[1:])
			}
			src := strings.Join(ws, sep)
			resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: basicTokens, numbering: stage.NumberingNone})
			checkInsideMargins(t, pdfBoxes(t, resp.PDF), basicTokens.Margins, 1)
			lines := strings.Split(strings.TrimSpace(pdfText(t, resp.PDF)), "\n")
			if len(lines) < 3 {
				t.Fatalf("%d lines, want the paragraph wrapped:\n%s", len(lines), strings.Join(lines, "\n"))
			}
			n := 0
			for _, line := range lines {
				for w := range strings.SplitSeq(strings.TrimSpace(line), sep) {
					if w == "" {
						continue
					}
					n++
					if !word.MatchString(w) {
						t.Errorf("line %q cuts a word: %q", line, w)
					}
				}
			}
			if n != len(ws) {
				t.Errorf("%d words read back, want %d:\n%s", n, len(ws), strings.Join(lines, "\n"))
			}
		})
	}
}
