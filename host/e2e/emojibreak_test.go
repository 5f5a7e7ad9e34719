package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestEmojiLineBreaksOnEveryBackend prints paragraphs of words joined by
// BMP emoji and no space on each backend. Those of UAX #14's ID and EB
// classes (⌚ ☕ ✊) open a line break on either side in Chromium, and now
// in render-fpdf, which kept them with their words and cut the words
// between characters instead: no word is cut, and every line is inside
// the margins. ✅ is AL: both backends keep it with its words, and the
// paragraph, one word to a line breaker, is cut between characters.
func TestEmojiLineBreaksOnEveryBackend(t *testing.T) {
	pdfcheck.Require(t)
	seps := []string{"⌚", "☕", "✊", "✅"}
	// Each paragraph's words start with a letter of their own, and are
	// of unequal widths: a line cut between characters then cuts a
	// word, rather than falling after an emoji by chance, as it does in
	// every line of words of one width.
	whole := regexp.MustCompile(`^[a-d]o*rd\d\d$`)
	var src strings.Builder
	for p, sep := range seps {
		ws := make([]string, 50)
		for i := range ws {
			ws[i] = string(rune('a'+p)) + strings.Repeat("o", i*7%5) + "rd" + strconv.Itoa(10+i)
		}
		src.WriteString(strings.Join(ws, sep) + "\n\n")
	}
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			resp, pdf := h.post(key, map[string]string{"markdown": src.String(), "theme": "basic", "pageNumeration": "none"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
			}
			// pdftotext's words, in reading order, without the emoji
			// (Chromium's are words of their own): the pieces of a
			// cut word do not match whole, and the piece after the
			// cut belongs to the paragraph before it.
			cut := make([]int, len(seps))
			lines := make([]map[float64]bool, len(seps))
			cur := 0
			for _, w := range pdfcheck.Words(t, pdf) {
				if w.XMin < 36 || w.XMax > w.PageW-36 {
					t.Errorf("%q at x %.1f-%.1f is outside the page's margins (width %.1f)", w.Text, w.XMin, w.XMax, w.PageW)
				}
				text := w.Text
				for _, sep := range seps {
					text = strings.ReplaceAll(text, sep, " ")
				}
				for _, tok := range strings.Fields(text) {
					if tok[0] >= 'a' && tok[0] <= 'd' {
						cur = int(tok[0] - 'a')
					}
					if !whole.MatchString(tok) {
						cut[cur]++
					}
					if lines[cur] == nil {
						lines[cur] = map[float64]bool{}
					}
					lines[cur][float64(int(w.YMin/4))] = true
				}
			}
			for p, sep := range seps {
				if len(lines[p]) < 3 {
					t.Errorf("%s: %d lines, want the paragraph wrapped", sep, len(lines[p]))
				}
				if wantCut := sep == "✅"; (cut[p] > 0) != wantCut {
					t.Errorf("%s: %d pieces of cut words, want cut words %v", sep, cut[p], wantCut)
				}
			}
		})
	}
}
