package layout

// Chinese and Japanese put no spaces between words, and a browser breaks
// their lines between any two characters, Korean too (CSS word-break:
// normal, after UAX #14's ID and Hangul classes). A run of them is still
// kept from breaking before closing punctuation, small kana and the
// prolonged sound mark, and after opening punctuation (kinsoku shori), as
// UAX #14's CL, CP, EX, IS, NS and OP classes keep it.

// breakBetween reports whether a line may break between a and b, two
// characters with no space between them.
func breakBetween(a, b rune) bool {
	if a < 0x2e80 && b < 0x2e80 { // the text of the other scripts, at one comparison
		return false
	}
	if !ideographic(a) && !ideographic(b) {
		return false
	}
	return !noBreakBefore(b) && !noBreakAfter(a)
}

// ideographic reports the characters of UAX #14's ID, H2 and H3 classes
// and the CJK punctuation around them: ideographs, kana, bopomofo, Hangul
// syllables, Yi, CJK symbols and fullwidth forms.
func ideographic(r rune) bool {
	switch {
	case r < 0x2e80:
		return false
	case r <= 0x2fff, // radicals, ideographic description
		r >= 0x3001 && r <= 0x33ff, // CJK symbols and punctuation (not the ideographic space), kana, bopomofo, Hangul jamo, enclosed, compatibility
		r >= 0x3400 && r <= 0x4dbf, // extension A
		r >= 0x4e00 && r <= 0x9fff, // unified ideographs
		r >= 0xa000 && r <= 0xa4cf, // Yi
		r >= 0xac00 && r <= 0xd7a3, // Hangul syllables
		r >= 0xf900 && r <= 0xfaff, // compatibility ideographs
		r >= 0xfe30 && r <= 0xfe4f, // compatibility forms
		r >= 0xff00 && r <= 0xffef: // fullwidth and halfwidth forms
		return true
	}
	// Emoji (UAX #14's ID and EB above the BMP) break as ideographs do.
	return r >= 0x1f000 && r <= 0x1faff || r >= 0x20000 && r <= 0x3fffd // planes 2 and 3: ideographs
}

// noBreakBefore reports closing punctuation, small kana and marks that
// must not start a line.
func noBreakBefore(r rune) bool {
	switch r {
	case '!', ')', ',', '.', ':', ';', '?', ']', '}', '%', '\'', '"',
		'’', '”', '»', '…', '‥', '‐', '–', '〜', '゠',
		'、', '。', '〉', '》', '」', '』', '】', '〕', '〗', '〙', '〛', '〞', '〟', '々', '〻',
		'ゝ', 'ゞ', 'ヽ', 'ヾ', 'ー', '・',
		'ぁ', 'ぃ', 'ぅ', 'ぇ', 'ぉ', 'っ', 'ゃ', 'ゅ', 'ょ', 'ゎ', 'ゕ', 'ゖ',
		'ァ', 'ィ', 'ゥ', 'ェ', 'ォ', 'ッ', 'ャ', 'ュ', 'ョ', 'ヮ', 'ヵ', 'ヶ',
		'！', '％', '）', '，', '．', '：', '；', '？', '］', '｝', '｠', '～',
		'｡', '｣', '､', '･', 'ｰ':
		return true
	}
	return r >= 0x31f0 && r <= 0x31ff || r >= 0xff67 && r <= 0xff6f // small katakana
}

// noBreakAfter reports opening punctuation, which must not end a line.
func noBreakAfter(r rune) bool {
	switch r {
	case '(', '[', '{', '‘', '“', '«',
		'〈', '《', '「', '『', '【', '〔', '〖', '〘', '〚', '〝',
		'（', '［', '｛', '｟', '｢':
		return true
	}
	return false
}
