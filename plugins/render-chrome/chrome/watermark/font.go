package watermark

import (
	"strings"

	"golang.org/x/text/encoding/charmap"
)

// The mark is set in Helvetica-Bold, one of the standard fonts every PDF
// reader has: nothing is embedded, and its metrics are known.
const (
	fontName = "Helvetica-Bold"
	// capHeight is Helvetica-Bold's cap height, in em.
	capHeight = 0.718
)

// helveticaBold holds Helvetica-Bold's advance widths in thousandths of an
// em, by WinAnsiEncoding code (Adobe's metrics for the standard font).
var helveticaBold = [256]uint16{
	278, 278, 278, 278, 278, 278, 278, 278, 278, 278, 278, 278, 278, 278, 278, 278, // 00
	278, 278, 278, 278, 278, 278, 278, 278, 278, 278, 278, 278, 278, 278, 278, 278, // 10
	278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, // 20
	556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611, // 30
	975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778, // 40
	667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556, // 50
	333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611, // 60
	611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584, 350, // 70
	556, 350, 278, 556, 500, 1000, 556, 556, 333, 1000, 667, 333, 1000, 350, 611, 350, // 80
	350, 278, 278, 500, 500, 350, 556, 1000, 333, 1000, 556, 333, 944, 350, 500, 667, // 90
	278, 333, 556, 556, 556, 556, 280, 556, 333, 737, 370, 556, 584, 333, 737, 333, // A0
	400, 584, 333, 333, 333, 611, 556, 278, 333, 333, 365, 556, 834, 834, 834, 611, // B0
	722, 722, 722, 722, 722, 722, 1000, 722, 667, 667, 667, 667, 278, 278, 278, 278, // C0
	722, 722, 778, 778, 778, 778, 778, 584, 778, 722, 722, 722, 722, 667, 667, 611, // D0
	556, 556, 556, 556, 556, 556, 889, 556, 556, 556, 556, 556, 278, 278, 278, 278, // E0
	611, 611, 611, 611, 611, 611, 611, 584, 611, 611, 611, 611, 611, 556, 611, 556, // F0
}

// encode returns s in WinAnsiEncoding (Windows-1252), the encoding the
// mark's font is given: control characters are dropped, the ends trimmed,
// and a character the encoding lacks is drawn as "?".
func encode(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r < 0xa0 {
			continue
		}
		b, ok := charmap.Windows1252.EncodeRune(r)
		if !ok {
			b = '?'
		}
		out = append(out, b)
	}
	// Trimmed byte by byte: bytes.Trim would read them as UTF-8.
	space := func(b byte) bool { return b == ' ' || b == 0xa0 }
	for len(out) > 0 && space(out[0]) {
		out = out[1:]
	}
	for len(out) > 0 && space(out[len(out)-1]) {
		out = out[:len(out)-1]
	}
	return out
}

// advance is the width of text in em, without letter spacing.
func advance(text []byte) float64 {
	w := 0
	for _, b := range text {
		w += int(helveticaBold[b])
	}
	return float64(w) / 1000
}

// literal writes text as a PDF literal string, escaping what the syntax
// needs and everything outside printable ASCII.
func literal(text []byte) string {
	var b strings.Builder
	b.WriteByte('(')
	for _, c := range text {
		switch {
		case c == '(' || c == ')' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			b.WriteByte('\\')
			b.WriteByte('0' + c>>6)
			b.WriteByte('0' + c>>3&7)
			b.WriteByte('0' + c&7)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(')')
	return b.String()
}
