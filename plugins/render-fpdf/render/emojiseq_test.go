package render

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/plugins/render-fpdf/layout"
	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

// TestEmojiSequencesKeptWhole lays out paragraphs of emoji sequences
// with no space between them, which wrap over several lines: a line
// breaks between sequences, never inside one (a flag's two letters, a
// family's joined people, a thumb and its skin tone, a keycap's digit and
// its frame), and each is drawn as one image.
func TestEmojiSequencesKeptWhole(t *testing.T) {
	needEmojiFont(t)
	needTool(t, "pdftotext")
	needTool(t, "pdfimages")
	r := emojiRenderer(t, SystemEmoji)
	for _, c := range []struct {
		name string
		seqs []string
	}{
		{"flags", []string{"🇫🇷", "🇯🇵"}},
		{"family", []string{"👨\u200d👩\u200d👧"}},
		{"tone", []string{"👍🏽", "👋🏿"}},
		{"keycap", []string{"1️⃣", "#️⃣"}},
		{"tag", []string{"🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			for i := range 120 {
				b.WriteString(c.seqs[i%len(c.seqs)])
			}
			resp := renderPDF(t, r, req{doc: markdownDoc(t, b.String()), tokens: basicTokens, numbering: stage.NumberingNone})
			lines := strings.Fields(pdfText(t, resp.PDF))
			if len(lines) < 2 {
				t.Fatalf("%d lines, want the paragraph wrapped", len(lines))
			}
			n := 0
			for _, line := range lines {
				rest := line
			next:
				for rest != "" {
					for _, s := range c.seqs {
						if strings.HasPrefix(rest, s) {
							rest, n = rest[len(s):], n+1
							continue next
						}
					}
					t.Errorf("line %q cuts a sequence at %q", line, rest)
					break
				}
			}
			if n != 120 {
				t.Errorf("%d sequences read back, want 120", n)
			}
			if got := imageObjects(t, resp.PDF); got != len(c.seqs) {
				t.Errorf("%d images embedded, want %d, one per sequence", got, len(c.seqs))
			}
		})
	}
}

// TestHostileEmojiSequencesBounded renders what a hostile document might
// hold: 10,000 flags of every pair of regional indicators, one emoji
// with 200,000 joiners after it, and 3,000 chains of joined people of
// every length up to 40. Each sequence is shaped from its first
// emoji.MaxSequence characters and once per document, and the
// document's bound on distinct glyphs holds, so the render costs what a
// text of its length does.
func TestHostileEmojiSequencesBounded(t *testing.T) {
	needEmojiFont(t)
	needTool(t, "pdfimages")
	var b strings.Builder
	for i := range 10_000 {
		b.WriteRune(0x1F1E6 + rune(i%26))
		b.WriteRune(0x1F1E6 + rune(i/26%26))
		b.WriteByte(" \n"[min(1, i%50/49)])
	}
	b.WriteString("\n\n👨" + strings.Repeat("\u200d", 200_000) + "👩\n\n")
	for i := range 3000 {
		b.WriteString(strings.Repeat("👨\u200d", 1+i%40) + "👩 ")
	}
	r := emojiRenderer(t, SystemEmoji)
	d := markdownDoc(t, b.String())
	runtime.GC()
	peak := 0
	stop := plugintest.SamplePeakHeap(&peak)
	// Counted in the CPU the process used, not on the wall: under CPU
	// load the render took 24-28 s on the wall with the race detector.
	start, cpu := time.Now(), cpuTime()
	resp := renderPDF(t, r, req{doc: d, tokens: basicTokens})
	took, wall := cpuTime()-cpu, time.Since(start)
	stop()
	t.Logf("%d KB of sequences: %d pages, %v of CPU (%v on the wall), peak heap %d MiB", b.Len()>>10, resp.Pages, took, wall, peak>>20)
	if took > 20*time.Second || peak > 256<<20 {
		t.Errorf("took %v of CPU, peak heap %d MiB", took, peak>>20)
	}
	if n := imageObjects(t, resp.PDF); n > layout.MaxEmojiImages {
		t.Errorf("%d images embedded, over the bound %d", n, layout.MaxEmojiImages)
	}
}
