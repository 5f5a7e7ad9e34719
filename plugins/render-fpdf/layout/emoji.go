package layout

import (
	"bytes"
	"image"
	"image/draw"
	"image/png"
	"sync"
	"unicode/utf8"

	"github.com/mdpress/mdpress/plugins/internal/emoji"
)

// Emoji are drawn as images from the colour emoji font (Options.Emoji),
// since fpdf draws outlines only and that font has none: each glyph's PNG
// is embedded once per document, and each emoji is an image box placed on
// the text's baseline as the font's metrics place it, as Chromium draws
// it. fpdf applies no OpenType tables, so a sequence that the font draws
// as one ligature (ZWJ sequences, skin tones, flags, keycaps) is drawn as
// its first character; the whole sequence is still the text a reader
// extracts (ImageBox.Text).

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
// asks for its emoji presentation, as Chromium chooses with the themes'
// font stacks. A character DejaVu has that Unicode presents as text
// (©, ☺, ⚠) stays text without U+FE0F; U+FE0E keeps any character text.
func (e *engine) emojiAt(s string, r rune, size int, resolved rune, st *style) (atom, int, bool) {
	if e.emoji == nil || r < 0x80 {
		return atom{}, 0, false
	}
	next, _ := utf8.DecodeRuneInString(s[size:])
	if next == vs15 || resolved != replacement && next != vs16 && !emoji.PresentedBMP(r) {
		return atom{}, 0, false
	}
	return e.emojiAtom(s, r, size, st)
}

// emojiSequence returns how many bytes of s, which starts after an emoji,
// belong to the sequence the font would draw as one glyph: variation
// selectors, skin tone modifiers, ZWJ and what it joins, a flag's second
// regional indicator, keycap and tag characters.
func emojiSequence(s string, first rune) int {
	n := 0
	regional := first >= 0x1F1E6 && first <= 0x1F1FF
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		switch {
		case r == vs16, r == vs15, r == 0x20E3, r >= 0x1F3FB && r <= 0x1F3FF, r >= 0xE0020 && r <= 0xE007F:
		case r == zwj:
			_, m := utf8.DecodeRuneInString(s[n+size:])
			size += m
		case regional && r >= 0x1F1E6 && r <= 0x1F1FF:
			regional = false
		default:
			return n
		}
		n += size
	}
	return n
}

// emojiImage returns the document's image of r's glyph, embedding it on
// first use. The font's PNGs are palette images with partly transparent
// entries, whose alpha fpdf would drop (it keeps one transparent index at
// most), so each is re-encoded once as RGBA, which fpdf embeds with a
// soft mask.
func (e *engine) emojiImage(r rune) (int, emojiBox, bool) {
	g, ok := e.emoji.Glyph(r)
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
		e.log.Debug("emoji image dropped", "char", string(r), "err", err)
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
// character r, of size bytes), and how many bytes of s it takes.
func (e *engine) emojiAtom(s string, r rune, size int, st *style) (atom, int, bool) {
	if r == replacement {
		return atom{}, 0, false
	}
	img, box, ok := e.emojiImage(r)
	if !ok {
		return atom{}, 0, false
	}
	n := size + emojiSequence(s[size:], r)
	e.atom()
	return atom{kind: aEmoji, face: st.face(), text: s[:n], w: box.advance * st.size, img: img, imgH: box.h * st.size, st: st}, n, true
}

// drawEmoji places an emoji atom whose pen is at x on the baseline base.
// Its text goes with the image, for the painter to make extractable, and
// the face's space is what the painter draws it with.
func (e *engine) drawEmoji(a *atom, x, base float64) {
	box := e.emojiBoxes[a.img]
	size := a.st.size
	e.used(a.face).Add(' ')
	base -= a.st.rise
	e.add(Item{Kind: ImageBox, Image: a.img, X: x + box.bearingX*size, Y: base - box.top*size,
		W: box.w * size, H: box.h * size, Text: a.text, Face: a.face, Size: size,
		X2: x, Y2: base, LineWidth: a.w})
}

// emojiExtent is how far an emoji atom reaches above and below the
// baseline.
func (e *engine) emojiExtent(a *atom) (asc, desc float64) {
	box := e.emojiBoxes[a.img]
	return box.top*a.st.size + a.st.rise, (box.h-box.top)*a.st.size - a.st.rise
}
