package layout

import (
	"bytes"
	"image"
	"image/draw"
	"image/png"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rivo/uniseg"

	"github.com/mdpress/mdpress/plugins/internal/emoji"
)

// Emoji are drawn as images from the colour emoji font (Options.Emoji),
// since fpdf draws outlines only and that font has none: each glyph's PNG
// is embedded once per document, and each emoji is an image box placed on
// the text's baseline as the font's metrics place it, as Chromium draws
// it. An emoji and the characters that join it (a grapheme cluster: a
// flag's two regional indicators, a ZWJ sequence, a skin tone, a keycap, a
// tag sequence) are one atom, which a line never breaks, drawn with the
// glyph the font's ligatures choose for the whole (emoji.Font.Sequence),
// and extracted as its characters (ImageBox.Text).

const (
	vs15 = '\uFE0E' // text presentation
	vs16 = '\uFE0F' // emoji presentation
)

// emojiBox is where a glyph sits, in ems of the text size: BearingX right
// of the pen, Top above the baseline, W by H, the pen then moving Advance.
type emojiBox struct{ bearingX, top, w, h, advance float64 }

// emojiAt returns the atom of an emoji that starts s, with r its first
// character of size bytes, if r is drawn from the emoji font: when no text
// font has it (resolved to U+FFFD), when Unicode presents it as emoji by
// default (⚡ ☕ ✨, emoji.BMP, which DejaVu has in black), or when U+FE0F
// or a skin tone asks for its emoji presentation, as Chromium chooses with
// the themes' font stacks. A character DejaVu has that Unicode presents as
// text (©, ☺, ⚠) stays text without them; U+FE0E keeps any character
// text. Of ASCII, only a keycap's digit, # or * starts an emoji. n is
// the bytes of s the emoji takes; when not ok and n > 0, the caller draws
// r for all of them.
func (e *engine) emojiAt(s string, r rune, size int, resolved rune, st *style) (atom, int, bool) {
	if e.emoji == nil || r < 0x80 && !keycap(s, r) {
		return atom{}, 0, false
	}
	next, _ := utf8.DecodeRuneInString(s[size:])
	if next == vs15 || resolved != replacement && next != vs16 && !skinTone(next) && !emoji.PresentedBMP(r) && r >= 0x80 {
		return atom{}, 0, false
	}
	return e.emojiAtom(s, r, size, st)
}

// keycap reports whether s, which starts with the ASCII r, is a keycap
// sequence: a digit, # or *, then U+20E3 after an optional U+FE0F.
func keycap(s string, r rune) bool {
	if !(r >= '0' && r <= '9' || r == '#' || r == '*') {
		return false
	}
	s = strings.TrimPrefix(s[1:], string(vs16))
	return strings.HasPrefix(s, "\u20E3")
}

func skinTone(r rune) bool { return r >= 0x1F3FB && r <= 0x1F3FF }

// emojiRun is what an emoji atom draws: the images of the glyphs the font
// draws its sequence with (one, unless the font has no glyph for the
// whole), and how far they reach, in ems of the text size.
type emojiRun struct {
	parts                []emojiPart
	top, bottom, advance float64
}

// emojiPart is one glyph's image, its pen x ems from the run's start.
type emojiPart struct {
	img int
	x   float64
}

// emojiRunOf returns the index in e.emojiRuns of what the cluster seq
// draws, r its first character of size bytes; false when it draws
// nothing (no glyph, or the document's bound reached). A lone character
// is looked up in the cmap; a sequence is shaped once per document.
func (e *engine) emojiRunOf(seq string, r rune, size int) (int, bool) {
	if len(seq) == size {
		id := e.emoji.Lookup(r)
		if i, ok := e.glyphRuns[id]; ok {
			return i, i >= 0
		}
		i := e.newRun(append(e.glyphBuf[:0], id))
		if e.glyphRuns == nil {
			e.glyphRuns = map[uint16]int{}
		}
		e.glyphRuns[id] = i
		return i, i >= 0
	}
	if i, ok := e.seqRuns[seq]; ok {
		return i, i >= 0
	}
	e.glyphBuf = e.emoji.Sequence(seq, e.glyphBuf[:0])
	i := -1
	if len(e.glyphBuf) == 1 {
		// Sequences of one glyph share the run of that glyph.
		id := e.glyphBuf[0]
		var ok bool
		if i, ok = e.glyphRuns[id]; !ok {
			i = e.newRun(e.glyphBuf)
			if e.glyphRuns == nil {
				e.glyphRuns = map[uint16]int{}
			}
			e.glyphRuns[id] = i
		}
	} else if len(e.glyphBuf) > 1 {
		i = e.newRun(e.glyphBuf)
	}
	if e.seqRuns == nil {
		e.seqRuns = map[string]int{}
	}
	e.seqRuns[seq] = i
	return i, i >= 0
}

// newRun adds the run of glyphs ids, those of them that can be drawn,
// and returns its index; -1 when none can.
func (e *engine) newRun(ids []uint16) int {
	var run emojiRun
	for _, id := range ids {
		img, box, ok := e.emojiImage(id)
		if !ok {
			continue
		}
		run.parts = append(run.parts, emojiPart{img: img, x: run.advance})
		run.top, run.bottom = max(run.top, box.top), max(run.bottom, box.h-box.top)
		run.advance += box.advance
	}
	if run.parts == nil {
		return -1
	}
	e.emojiRuns = append(e.emojiRuns, run)
	return len(e.emojiRuns) - 1
}

// emojiImage returns the document's image of glyph id, embedding it on
// first use. The font's PNGs are palette images with partly transparent
// entries, whose alpha fpdf would drop (it keeps one transparent index at
// most), so each is re-encoded once as RGBA, which fpdf embeds with a
// soft mask.
func (e *engine) emojiImage(id uint16) (int, emojiBox, bool) {
	g, ok := e.emoji.GlyphByID(id)
	if !ok {
		return 0, emojiBox{}, false
	}
	if i, ok := e.emojiImages[g.ID]; ok {
		return i, e.emojiBoxes[i], true
	}
	if len(e.emojiImages) == MaxEmojiImages {
		// Each new glyph costs ~1.5 ms of CPU to embed: a few KB listing
		// every emoji would cost seconds. Past the bound, U+FFFD.
		if !e.emojiCapped {
			e.emojiCapped = true
			e.log.Info("emoji past the document's distinct-glyph bound drawn as U+FFFD", "bound", MaxEmojiImages)
		}
		return 0, emojiBox{}, false
	}
	src, err := png.Decode(bytes.NewReader(g.PNG))
	if err != nil {
		e.log.Debug("emoji image dropped", "glyph", id, "err", err)
		return 0, emojiBox{}, false
	}
	rgba := image.NewNRGBA(src.Bounds())
	draw.Draw(rgba, rgba.Bounds(), src, src.Bounds().Min, draw.Src)
	var buf bytes.Buffer
	if err := emojiEncoder.Encode(&buf, rgba); err != nil {
		return 0, emojiBox{}, false
	}
	em := float64(g.PPEM)
	box := emojiBox{bearingX: float64(g.BearingX) / em, top: float64(g.BearingY) / em,
		w: float64(g.Width) / em, h: float64(g.Height) / em, advance: float64(g.Advance) / em}
	i := len(e.doc.Images)
	e.doc.Images = append(e.doc.Images, Image{Type: PNG, Data: buf.Bytes(), Width: g.Width, Height: g.Height})
	if e.emojiImages == nil {
		e.emojiImages, e.emojiBoxes = map[uint16]int{}, map[int]emojiBox{}
	}
	e.emojiImages[g.ID], e.emojiBoxes[i] = i, box
	return i, box, true
}

// MaxEmojiImages bounds the distinct emoji glyphs a document embeds.
const MaxEmojiImages = 256

// emojiEncoder re-encodes emoji PNGs with pooled compressors: a fresh one
// is about a megabyte to allocate and clear, for an image of 70 KB.
var emojiEncoder = png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &encoderPool{}}

type encoderPool struct{ sync.Pool }

func (p *encoderPool) Get() *png.EncoderBuffer {
	b, _ := p.Pool.Get().(*png.EncoderBuffer)
	return b
}

func (p *encoderPool) Put(b *png.EncoderBuffer) { p.Pool.Put(b) }

// emojiAtom returns the atom of the emoji that starts s (its first
// character r, of size bytes) and the characters that join it, and how
// many bytes of s they take, which are also returned when the font
// draws none of it.
func (e *engine) emojiAtom(s string, r rune, size int, st *style) (atom, int, bool) {
	if r == replacement || r >= 0x80 && e.emoji.Lookup(r) == 0 {
		// Not an emoji: a character no font has, drawn as U+FFFD as
		// its marks are.
		return atom{}, 0, false
	}
	seq := s[:size]
	if size < len(s) && s[size] >= 0x80 {
		// Nothing ASCII joins an emoji: the common emoji before a space
		// or a word needs no segmenting.
		seq, _, _, _ = uniseg.FirstGraphemeClusterInString(s, -1)
	}
	run, ok := e.emojiRunOf(seq, r, size)
	if !ok {
		// The whole sequence is what the caller then draws as its first
		// character (U+FFFD, a keycap's digit): the characters that
		// joined it would otherwise be drawn apart (a flag's second
		// letter, a skin tone's swatch).
		return atom{}, len(seq), false
	}
	e.atom()
	w := e.emojiRuns[run].advance * st.size
	return atom{kind: aEmoji, face: st.face(), text: seq, w: w, img: run, imgH: e.emojiRuns[run].top * st.size, st: st}, len(seq), true
}

// drawEmoji places an emoji atom whose pen is at x on the baseline base.
// Its text goes with its first image, for the painter to make
// extractable over the whole advance, and the face's space is what the
// painter draws it with.
func (e *engine) drawEmoji(a *atom, x, base float64) {
	run := &e.emojiRuns[a.img]
	size := a.st.size
	e.used(a.face).Add(' ')
	base -= a.st.rise
	for i, p := range run.parts {
		box := e.emojiBoxes[p.img]
		it := Item{Kind: ImageBox, Image: p.img, X: x + (p.x+box.bearingX)*size, Y: base - box.top*size,
			W: box.w * size, H: box.h * size}
		if i == 0 {
			it.Text, it.Face, it.Size, it.X2, it.Y2, it.LineWidth = a.text, a.face, size, x, base, a.w
			// Painted as its image and as invisible text in a span of
			// its own (paint.emoji), it costs the page's content twice a
			// text run's: counted once, 250,000 emoji held 319 MiB of
			// heap, over the ~250 MiB that MaxItems keeps a render to.
			e.items++
		}
		e.add(it)
	}
}

// emojiExtent is how far an emoji atom reaches above and below the
// baseline.
func (e *engine) emojiExtent(a *atom) (asc, desc float64) {
	run := &e.emojiRuns[a.img]
	return run.top*a.st.size + a.st.rise, run.bottom*a.st.size - a.st.rise
}
