package markdown

import (
	"bytes"
	"html"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/util"
)

// A display formula's \tag{1} numbers it: MathJax, which GitHub draws
// math with, prints (1) at the right margin, on the formula's baseline;
// \tag*{A} prints A. The converter does not know \tag, so the formula
// printed as its source. The tag is taken out of the TeX before it is
// converted and carried beside the MathML: in the HTML as a span that a
// flex row puts at the margin, the formula still centred, and in the tree
// as the attribute mathtag, which render-fpdf draws alike. Only the
// common form is read: one \tag of plain text (no command, group or
// dollar in it) outside braces and environments (a \tag per row of an
// align is left as source, as is any other \tag).

// maxTagBytes bounds a tag's text: a number, a letter, a short name.
const maxTagBytes = 40

// displayTag returns tex without its \tag and the tag's text as it is
// printed, or tex unchanged and "" when it has no tag of the form read.
func displayTag(tex []byte) (rest []byte, tag string) {
	rest, raw, star := displayTagRaw(tex)
	return rest, printedTag(raw, star)
}

// displayTagRaw is displayTag that returns the tag's text as written
// and whether it is \tag*'s, which \eqref and \ref print from.
func displayTagRaw(tex []byte) (rest []byte, raw string, star bool) {
	at := -1
	depth := 0
	for i := 0; i < len(tex); i++ {
		switch tex[i] {
		case '{':
			depth++
		case '}':
			depth--
		case '%':
			// A comment, to the line's end: a \tag commented out
			// (% \tag{1}) numbers nothing, in TeX or MathJax, and
			// the converter drops it.
			i = lineEnd(tex, i)
		case '\\':
			name, end := controlWord(tex, i)
			switch name {
			case "begin":
				return tex, "", false
			case "tag":
				if at >= 0 || depth != 0 {
					return tex, "", false
				}
				at = i
			}
			i = max(end-1, i+1) // past the name, or a control symbol's character
		}
	}
	if at < 0 {
		return tex, "", false
	}
	raw, star, end, ok := readTag(tex, at)
	if !ok {
		return tex, "", false
	}
	rest = append(append(bytes.Clone(tex[:at]), ' '), tex[end:]...)
	return rest, raw, star
}

// readTag reads the \tag or \tag* at tex[at] ('\'): the tag's text as
// written, whether it is \tag*'s and the index after its argument, or
// false when the argument is not plain text (no command, group or
// dollar) of at most maxTagBytes.
func readTag(tex []byte, at int) (raw string, star bool, end int, ok bool) {
	_, end = controlWord(tex, at)
	star = end < len(tex) && tex[end] == '*'
	if star {
		end++
	}
	o := skipSpace(tex, end)
	if o >= len(tex) || tex[o] != '{' {
		return "", false, 0, false
	}
	c := bytes.IndexByte(tex[o:], '}')
	if c < 0 {
		return "", false, 0, false
	}
	raw = strings.TrimSpace(string(tex[o+1 : o+c]))
	if raw == "" || len(raw) > maxTagBytes || strings.ContainsAny(raw, `\{}$%&#^_~`) || !utf8.ValidString(raw) {
		return "", false, 0, false
	}
	return raw, star, o + c + 1, true
}

// printedTag is how a tag written raw prints: \tag*{A} as A, \tag{1}
// as (1); "" stays "".
func printedTag(raw string, star bool) string {
	if raw == "" || star {
		return raw
	}
	return "(" + raw + ")"
}

// writeTagged writes a tagged display formula's MathML m for Chromium:
// a flex row of an empty cell, the formula and the tag's cell, the two
// cells styled alike but for the alignment, so that they grow alike, the
// formula stays centred and the tag ends at the right margin (left to
// right whatever the text's direction, as MathJax puts it); el is the
// row's element (div for a math block, span inside a paragraph) and
// class its class. A tag with no room beside the formula wraps to a line
// of its own under it, flush right, as LaTeX puts it: kept on the
// formula's line, it ran past the margin, where the theme's
// overflow-x: hidden cut it off (\tag{Pythagoras, general form} on A6).
func writeTagged(w util.BufWriter, el, class, m, tag string) {
	const cell = `flex: 1 1 0; padding-inline-start: 1em; white-space: nowrap;`
	_, _ = w.WriteString(`<` + el + ` class="` + class + ` math-tagged" style="display: flex; flex-wrap: wrap; align-items: baseline; direction: ltr;">`)
	_, _ = w.WriteString(`<span style="` + cell + `"></span>`)
	_, _ = w.WriteString(m)
	_, _ = w.WriteString(`<span class="math-tag" style="` + cell + ` text-align: right;">`)
	_, _ = w.WriteString(html.EscapeString(tag))
	_, _ = w.WriteString(`</span></` + el + `>`)
}

// lineEnd returns the index of the end of the line holding tex[i]: its
// newline, or len(tex). A TeX comment runs to it.
func lineEnd(tex []byte, i int) int {
	if nl := bytes.IndexByte(tex[i:], '\n'); nl >= 0 {
		return i + nl
	}
	return len(tex)
}
