package markdown

import (
	"context"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestHeadingIDsAsGitHub: a heading's id is the one GitHub gives it, so
// that a README's links to its own sections work in the PDF; goldmark's
// own ids dropped every character beyond ASCII and made "_" a "-".
func TestHeadingIDsAsGitHub(t *testing.T) {
	headings := []struct{ text, id string }{
		{"Café crème", "café-crème"},
		{"my_func()", "my_func"},
		{"C++ & Go", "c--go"},
		{"Hello, World!", "hello-world"},
		{"כותרת ראשית", "כותרת-ראשית"},
		{"标题 2", "标题-2"},
		{"Привет, мир", "привет-мир"},
		{"😀 Emoji", "-emoji"},
		{"Hello, World!", "hello-world-1"}, // taken: numbered
		{"hello-world-1", "hello-world-1-1"},
		{"Hello World", "hello-world-2"},
		{"!!!", "heading"},
	}
	var md strings.Builder
	for _, h := range headings {
		md.WriteString("## " + h.text + "\n\n")
	}
	res, err := New(nil).Parse(context.Background(), &stage.ParseRequest{Markdown: md.String()})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headings {
		if !strings.Contains(res.Document.HTML, `<h2 id="`+h.id+`"`) {
			t.Errorf("%q: no heading with id %q in\n%s", h.text, h.id, res.Document.HTML)
		}
	}
	if len(res.Document.Outline) != len(headings) {
		t.Fatalf("outline of %d headings, want %d", len(res.Document.Outline), len(headings))
	}
	for i, h := range res.Document.Outline {
		if h.ID != headings[i].id {
			t.Errorf("outline %d: id %q, want %q", i, h.ID, headings[i].id)
		}
	}
}
