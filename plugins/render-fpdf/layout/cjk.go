package layout

// Chinese and Japanese put no spaces between words, and a browser breaks
// their lines between any two characters, Korean too (CSS word-break:
// normal, after UAX #14's ID and Hangul classes), and on either side of
// an emoji of the ID and EB classes (⌚, ☕, ✊, ❤ in the BMP; ✅ and ⚠
// are AL and stay with the word they touch, in Chromium too). A run of
// them is still kept from breaking before closing punctuation, small kana and the
// prolonged sound mark, and after opening punctuation (kinsoku shori), as
// UAX #14's CL, CP, EX, IS, NS and OP classes keep it.

// breakBetween reports whether a line may break between a and b, two
// characters with no space between them.
func breakBetween(a, b rune) bool {
	if a < bmpEmojiFirst && b < bmpEmojiFirst { // the text of most other scripts, at one comparison
		return false
	}
	if !ideographic(a) && !ideographic(b) {
		return false
	}
	return !noBreakBefore(b) && !noBreakAfter(a)
}

// ideographic reports the characters of UAX #14's ID, H2 and H3 classes
// and the CJK punctuation around them: ideographs, kana, bopomofo, Hangul
// syllables, Yi, CJK symbols and fullwidth forms; and the emoji of the ID
// and EB classes.
func ideographic(r rune) bool {
	switch {
	case r < bmpEmojiFirst:
		return false
	case r < 0x2e80:
		return bmpEmoji(r)
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

// bmpEmojiFirst is the first character below U+2E80 of UAX #14's ID or
// EB class (⌚).
const bmpEmojiFirst = 0x231a

// bmpEmojiRanges are the characters of the BMP below U+2E80 that
// LineBreak.txt (Unicode 15.0) puts in the ID or EB class, as inclusive
// ranges in order: emoji that Chromium (ICU) breaks lines on either side
// of. The other emoji there (✅ U+2705, ⚠ U+26A0, ✨ U+2728) are AL, and
// a line does not break between them and a letter.
var bmpEmojiRanges = [...][2]rune{
	{0x231a, 0x231b}, {0x23f0, 0x23f3}, {0x2600, 0x2603}, {0x2614, 0x2615},
	{0x2618, 0x2618}, {0x261a, 0x261f}, {0x2639, 0x263b}, {0x2668, 0x2668},
	{0x267f, 0x267f}, {0x26bd, 0x26c8}, {0x26cd, 0x26cd}, {0x26cf, 0x26d1},
	{0x26d3, 0x26d4}, {0x26d8, 0x26d9}, {0x26dc, 0x26dc}, {0x26df, 0x26e1},
	{0x26ea, 0x26ea}, {0x26f1, 0x26f5}, {0x26f7, 0x26fa}, {0x26fd, 0x2704},
	{0x2708, 0x270d}, {0x2764, 0x2764},
}

// bmpEmoji reports whether r is one of bmpEmojiRanges.
func bmpEmoji(r rune) bool {
	if r > 0x2764 {
		return false
	}
	for _, rg := range bmpEmojiRanges {
		if r < rg[0] {
			return false
		}
		if r <= rg[1] {
			return true
		}
	}
	return false
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
