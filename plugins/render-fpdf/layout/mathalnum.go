package layout

import "github.com/mdpress/mdpress/plugins/render-fpdf/fonts"

// The converter writes \mathbf, \mathit, \mathsf, \mathtt and
// \boldsymbol as Unicode's mathematical alphanumerics (U+1D400-U+1D7FF),
// which the text faces do not map. Those of them that a DejaVu face draws,
// the bold, italic, sans-serif and monospace alphabets, are drawn as their
// plain letter in that face; script, fraktur and double-struck letters
// (\mathcal, \mathscr, \mathfrak, \mathbb) in the face made for them,
// fonts.MathAlpha.

// mathAlnum returns the letter or digit r stands for and the face that
// draws it, or false when r is not one of the alphabets above.
func mathAlnum(r rune) (rune, fonts.ID, bool) {
	switch {
	case r >= 0x1D400 && r < 0x1D400+13*52:
		i := int(r - 0x1D400)
		letter := rune('A' + i%52)
		if i%52 >= 26 {
			letter = rune('a' + i%52 - 26)
		}
		var id fonts.ID
		switch i / 52 {
		case 0:
			id = fonts.Of(fonts.Serif, fonts.Bold)
		case 1:
			id = fonts.Of(fonts.Serif, fonts.Italic)
		case 2:
			id = fonts.Of(fonts.Serif, fonts.BoldItalic)
		case 8:
			id = fonts.Of(fonts.Sans, fonts.Regular)
		case 9:
			id = fonts.Of(fonts.Sans, fonts.Bold)
		case 10:
			id = fonts.Of(fonts.Sans, fonts.Italic)
		case 11:
			id = fonts.Of(fonts.Sans, fonts.BoldItalic)
		case 12:
			id = fonts.Of(fonts.Mono, fonts.Regular)
		default:
			return 0, 0, false
		}
		return letter, id, true
	case r >= 0x1D6A8 && r < 0x1D6A8+5*58:
		i := int(r - 0x1D6A8)
		g, ok := greekAlnum(i % 58)
		if !ok {
			return 0, 0, false
		}
		styles := [...]fonts.ID{fonts.Of(fonts.Serif, fonts.Bold), fonts.Of(fonts.Serif, fonts.Italic),
			fonts.Of(fonts.Serif, fonts.BoldItalic), fonts.Of(fonts.Sans, fonts.Bold), fonts.Of(fonts.Sans, fonts.BoldItalic)}
		return g, styles[i/58], true
	case r >= 0x1D7CE && r <= 0x1D7FF:
		i := int(r - 0x1D7CE)
		digit := rune('0' + i%10)
		switch i / 10 {
		case 0:
			return digit, fonts.Of(fonts.Serif, fonts.Bold), true
		case 2:
			return digit, fonts.Of(fonts.Sans, fonts.Regular), true
		case 3:
			return digit, fonts.Of(fonts.Sans, fonts.Bold), true
		case 4:
			return digit, fonts.Of(fonts.Mono, fonts.Regular), true
		}
	}
	return 0, 0, false
}

// greekAlnum is the i-th character of each Greek mathematical alphabet:
// capitals (with ϴ where the final sigma would be), nabla, small letters,
// the partial sign and six variants.
func greekAlnum(i int) (rune, bool) {
	switch {
	case i == 17:
		return 'ϴ', true
	case i < 25:
		return rune(0x391 + i), true
	case i == 25:
		return '∇', true
	case i < 51:
		return rune(0x3B1 + i - 26), true
	case i == 51:
		return '∂', true
	case i < 58:
		return []rune("ϵϑϰϕϱϖ")[i-52], true
	}
	return 0, false
}
