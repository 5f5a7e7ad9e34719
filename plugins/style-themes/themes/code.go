package themes

import (
	"html"
	"strings"

	"github.com/mdpress/mdpress/plugins/internal/highlight"
	"github.com/mdpress/mdpress/sdk/stage"
)

// codeOpen starts a fenced code block that names its language in the
// parser's HTML (goldmark's, as GitHub marks it).
const (
	codeOpen  = `<pre><code class="language-`
	codeClose = `</code></pre>`
)

// highlightCode colours the code blocks of a body: each block's text in
// spans of class "hl-<class>", which writePaletteCSS colours. A block
// whose language chroma does not know, or past the document's
// highlighting budget, is left as it is.
//
// The parser escapes a block's text, so a '<' inside one is markup the
// document's own raw HTML wrote there: such a block is left as it is too.
func highlightCode(body string, p stage.CodePalette) string {
	if p == (stage.CodePalette{}) || !strings.Contains(body, codeOpen) {
		return body
	}
	budget := highlight.NewBudget()
	var b strings.Builder
	b.Grow(len(body) + len(body)/4)
	// closeAt is where the first closer at or after the current position
	// is, in the original body (-1: none is left), and base is how far
	// the body has advanced: a search for the closer from each opener
	// would be quadratic in a body of openers that one far closer, or
	// none, ends.
	orig, base, closeAt := body, 0, 0
	for !budget.Spent() {
		i := strings.Index(body, codeOpen)
		if i < 0 {
			break
		}
		b.WriteString(body[:i+len(codeOpen)])
		body = body[i+len(codeOpen):]
		base += i + len(codeOpen)
		if closeAt >= 0 && closeAt < base {
			if closeAt = strings.Index(orig[base:], codeClose); closeAt >= 0 {
				closeAt += base
			}
		}
		if closeAt < 0 {
			break
		}
		end := closeAt - base
		// The class names one language: it ends within a few bytes.
		q := strings.Index(body[:min(end, maxClassBytes)], `">`)
		if q < 0 || strings.ContainsAny(body[:q], `"<>`) || strings.IndexByte(body[q+2:end], '<') >= 0 {
			continue
		}
		// Chromium reads CR LF as one line break but a CR and an LF in
		// separate spans as two, and lexers end a line's last token (a
		// comment, a string) after its CR: a document written with CR LF
		// would print a blank line after each. The page shows the same
		// lines either way.
		code := strings.ReplaceAll(html.UnescapeString(body[q+2:end]), "\r\n", "\n")
		spans := budget.Spans(html.UnescapeString(body[:q]), code)
		if spans == nil {
			continue
		}
		b.WriteString(body[:q+2])
		for _, s := range spans {
			if s.Class == highlight.Plain || highlight.Colour(p, s.Class) == "" {
				b.WriteString(html.EscapeString(s.Text))
				continue
			}
			b.WriteString(`<span class="hl-`)
			b.WriteString(s.Class)
			b.WriteString(`">`)
			b.WriteString(html.EscapeString(s.Text))
			b.WriteString(`</span>`)
		}
		body = body[end:]
		base += end
	}
	b.WriteString(body)
	return b.String()
}

// maxClassBytes bounds the search for the end of a block's class: a
// language chroma knows has a short name.
const maxClassBytes = 64

// writePaletteCSS writes the colours of the spans highlightCode makes,
// inside the theme's layer, so that an operator's stylesheet and the
// document's own CSS still win.
func writePaletteCSS(b *strings.Builder, p stage.CodePalette) {
	for _, class := range highlight.Classes {
		if c := highlight.Colour(p, class); c != "" {
			b.WriteString("pre code .hl-" + class + " { color: " + c + "; }\n")
		}
	}
}
