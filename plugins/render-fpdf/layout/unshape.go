package layout

// The painter draws the presentation forms shape gave a line, in display
// order, and without more a reader extracts those forms: pdftotext gave
// ﻣﺮﺣﺒﺎ for مرحبا and a lam-alef as one ligature character, which a
// search for the word does not match without NFKC folding. The painter
// therefore wraps each word holding a form in a marked-content span whose
// ActualText is Unshape of its characters.
//
// That text keeps the display order the glyphs are drawn in, not the
// order written: poppler (pdftotext) lays a span's ActualText left to
// right over the span's glyphs and then puts the line into reading order
// as it does the text drawn outside spans, so a span holding the word as
// written came out of pdftotext spelt backwards (ابحرم for مرحبا).

// unshaped maps each presentation form shape draws to the letters it
// stands for, in display order: a lam-alef ligature is alef then lam.
var unshaped = unshapedForms()

func unshapedForms() map[rune][2]rune {
	m := make(map[rune][2]rune, 4*len(positionalForms)+2*len(lamAlefForms))
	for r, forms := range positionalForms {
		for _, f := range forms {
			if f != 0 {
				m[f] = [2]rune{r}
			}
		}
	}
	for alef, forms := range lamAlefForms {
		for _, f := range forms {
			m[f] = [2]rune{alef, 0x644}
		}
	}
	return m
}

// isForm reports the presentation forms shape draws; all lie in
// U+FB50-U+FEFF.
func isForm(r rune) bool {
	if r < 0xFB50 || r > 0xFEFF {
		return false
	}
	_, ok := unshaped[r]
	return ok
}

// HasForms reports whether s holds a presentation form shape draws.
func HasForms(s string) bool {
	for _, r := range s {
		if isForm(r) {
			return true
		}
	}
	return false
}

// Unshape returns s, text of a line in display order, with each
// presentation form shape draws replaced by the letters it stands for, in
// display order too. A form the author typed as such is replaced as well,
// as NFKC normalization replaces it.
func Unshape(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if !isForm(r) {
			out = append(out, r)
			continue
		}
		u := unshaped[r]
		out = append(out, u[0])
		if u[1] != 0 {
			out = append(out, u[1])
		}
	}
	return string(out)
}
