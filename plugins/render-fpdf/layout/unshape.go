package layout

// A right-to-left line is drawn in display order with characters that
// stand for others: Arabic letters as the presentation forms shape gives
// them, brackets mirrored (reverseRTL). Without more a reader extracts
// what is drawn: pdftotext gave ﻣﺮﺣﺒﺎ for مرحبا and a lam-alef as one
// ligature character, which a search for the word does not match without
// NFKC folding, and (עולם) as )עולם(. Each atom of such a line that holds
// them is listed in Doc.Actual with the characters it stands for, which
// the painter puts in a marked-content span's ActualText around it.
//
// That text keeps the display order the glyphs are drawn in, not the
// order written: poppler (pdftotext) lays a span's ActualText left to
// right over the span's glyphs and then puts the line into reading order
// as it does the text drawn outside spans, so a span holding the word as
// written came out of pdftotext spelt backwards (ابحرم for مرحبا). The
// brackets are given unmirrored, as Chromium's PDF maps its mirrored
// glyphs, which poppler reads back as written.

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

// Actual returns what s, text in display order, stands for: each
// presentation form replaced by its letters and, when s was reversed for
// display, each bracket by the one written. A presentation form typed as
// such is replaced too, as NFKC normalization replaces it.
func Actual(s string, reversed bool) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if m, ok := mirrored[r]; ok && reversed {
			out = append(out, m)
			continue
		}
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

// standsForOther reports whether text s, reversed for display or not,
// is other than Actual of it.
func standsForOther(s string, reversed bool) bool {
	for _, r := range s {
		if _, m := mirrored[r]; isForm(r) || reversed && m {
			return true
		}
	}
	return false
}

// actual lists the atoms of the text item just added, run, that stand for
// other characters, by their bytes in its text.
func (e *engine) actual(run []atom) {
	var parts []ActualText
	at := 0
	for i := range run {
		a := &run[i]
		if a.kind == aText && standsForOther(a.text, a.reversed) {
			parts = append(parts, ActualText{Start: at, End: at + len(a.text), Reversed: a.reversed})
		}
		at += len(a.text)
	}
	if parts != nil {
		e.doc.Actual = append(e.doc.Actual, parts)
		e.page.Items[len(e.page.Items)-1].Actual = uint32(len(e.doc.Actual))
	}
}
