package markdown

import (
	"bufio"
	"bytes"
	stdhtml "html"

	"github.com/yuin/goldmark/renderer/html"
)

// decoder resolves backslash escapes and character references in Markdown
// text exactly as goldmark's HTML writer does, then undoes the writer's
// HTML escaping, so the tree's text matches what the HTML shows.
type decoder struct {
	buf bytes.Buffer
	w   *bufio.Writer
}

func (d *decoder) decode(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 && bytes.IndexByte(b, '&') < 0 && bytes.IndexByte(b, 0) < 0 {
		return string(b)
	}
	if d.w == nil {
		d.w = bufio.NewWriterSize(&d.buf, 512)
	}
	d.buf.Reset()
	html.DefaultWriter.Write(d.w, b)
	_ = d.w.Flush() // a bytes.Buffer does not fail
	return stdhtml.UnescapeString(d.buf.String())
}
