package themes

import (
	"html"
	"slices"
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
		if !slices.ContainsFunc(spans, func(s highlight.Span) bool { return highlight.Colour(p, s.Class) != "" }) {
			continue // nothing to colour: the block stays as it is
		}
		b.WriteString(body[:q+2])
		writeLines(&b, spans, p)
		body = body[end:]
		base += end
	}
	b.WriteString(body)
	return b.String()
}

// writeLines writes a block's spans a line at a time, each line in a
// <div> of class hl-line (the line's text and its newline, so that the
// block reads as before). Chromium prints one inline context in time
// quadratic in the elements it holds: a 750-line JSON file of 30,000
// coloured numbers in one context ran past the render's 60 s, where a
// <div> per line prints it in 6 (a <span> made a block by CSS was as slow
// as one context). A line of more than maxLineSpans coloured spans
// (minified code) is written plain, as its own context would cost as
// much again.
func writeLines(b *strings.Builder, spans []highlight.Span, p stage.CodePalette) {
	var line []highlight.Span
	coloured := 0
	flush := func(newline bool) {
		b.WriteString(`<div class="hl-line">`)
		for _, s := range line {
			if s.Class == highlight.Plain || coloured > maxLineSpans {
				b.WriteString(html.EscapeString(s.Text))
				continue
			}
			b.WriteString(`<span class="hl-`)
			b.WriteString(s.Class)
			b.WriteString(`">`)
			b.WriteString(html.EscapeString(s.Text))
			b.WriteString(`</span>`)
		}
		if newline {
			b.WriteByte('\n')
		}
		b.WriteString(`</div>`)
		line, coloured = line[:0], 0
	}
	for _, s := range spans {
		class := s.Class
		if highlight.Colour(p, class) == "" {
			class = highlight.Plain
		}
		for text := s.Text; text != ""; {
			i := strings.IndexByte(text, '\n')
			piece := text
			if i >= 0 {
				piece = text[:i]
			}
			if piece != "" {
				line = append(line, highlight.Span{Class: class, Text: piece})
				if class != highlight.Plain {
					coloured++
				}
			}
			if i < 0 {
				break
			}
			flush(true)
			text = text[i+1:]
		}
	}
	if len(line) > 0 {
		flush(false)
	}
}

// maxLineSpans is the most coloured spans a line is written with: code
// has tens, minified code thousands.
const maxLineSpans = 256

// maxClassBytes bounds the search for the end of a block's class: a
// language chroma knows has a short name.
const maxClassBytes = 64

// writePaletteCSS writes the colours of the spans highlightCode makes,
// inside the theme's layer, so that an operator's stylesheet and the
// document's own CSS still win.
func writePaletteCSS(b *strings.Builder, p stage.CodePalette) {
	// The code holding writeLines' lines is a block, as they are, or
	// Chromium would split the inline code around each.
	b.WriteString("pre > code:has(> .hl-line) { display: block; }\n")
	for _, class := range highlight.Classes {
		if c := highlight.Colour(p, class); c != "" {
			b.WriteString("pre code .hl-" + class + " { color: " + c + "; }\n")
		}
	}
}
