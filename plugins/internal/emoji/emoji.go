// Package emoji holds the characters below U+1F000 that Unicode presents
// as emoji by default (Emoji_Presentation=Yes in emoji-data.txt), for
// style-themes (the colour font's unicode-range in Chromium) and
// render-fpdf (which characters it draws from the colour font), so that
// both backends draw ⚡ and ☕ in colour, as GitHub shows :zap: and
// :coffee:, while ♥, ✔ and ☺ (Emoji_Presentation=No) stay text unless
// U+FE0F follows them.
package emoji

// A Range is a run of code points, Lo to Hi inclusive.
type Range struct{ Lo, Hi rune }

// BMP lists the Emoji_Presentation characters of the Basic Multilingual
// Plane, in order. The list has not changed since Unicode 9: the emoji
// added since are all past U+1F000.
var BMP = []Range{
	{0x231A, 0x231B}, {0x23E9, 0x23EC}, {0x23F0, 0x23F0}, {0x23F3, 0x23F3},
	{0x25FD, 0x25FE}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x267F, 0x267F},
	{0x2693, 0x2693}, {0x26A1, 0x26A1}, {0x26AA, 0x26AB}, {0x26BD, 0x26BE},
	{0x26C4, 0x26C5}, {0x26CE, 0x26CE}, {0x26D4, 0x26D4}, {0x26EA, 0x26EA},
	{0x26F2, 0x26F3}, {0x26F5, 0x26F5}, {0x26FA, 0x26FA}, {0x26FD, 0x26FD},
	{0x2705, 0x2705}, {0x270A, 0x270B}, {0x2728, 0x2728}, {0x274C, 0x274C},
	{0x274E, 0x274E}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
	{0x27B0, 0x27B0}, {0x27BF, 0x27BF}, {0x2B1B, 0x2B1C}, {0x2B50, 0x2B50},
	{0x2B55, 0x2B55},
}

// PresentedBMP reports whether r is one of BMP's characters.
func PresentedBMP(r rune) bool {
	if r < BMP[0].Lo || r > BMP[len(BMP)-1].Hi {
		return false
	}
	for _, g := range BMP {
		if r < g.Lo {
			return false
		}
		if r <= g.Hi {
			return true
		}
	}
	return false
}
