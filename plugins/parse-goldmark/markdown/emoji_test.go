package markdown

import (
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestEmojiShortcodes checks that GitHub's shortcodes become their
// characters in the HTML and in the tree's text, and stay literal where
// GitHub leaves them: in code, and for names without a character.
func TestEmojiShortcodes(t *testing.T) {
	tests := []struct {
		name, src string
		// html and text must appear in the HTML and the tree's plain text.
		html, text []string
		// notHTML must not appear in the HTML.
		notHTML []string
	}{
		{name: "common ones", src: "Go :rocket: :tada: :+1: :white_check_mark: :warning:\n",
			html: []string{"Go 🚀 🎉 👍 ✅ ⚠️"}, text: []string{"Go 🚀 🎉 👍 ✅ ⚠️"}, notHTML: []string{":rocket:"}},
		{name: "in emphasis and links", src: "**:tada:** [:rocket: launch](https://x.test)\n",
			html: []string{"<strong>🎉</strong>", `<a href="https://x.test">🚀 launch</a>`}, text: []string{"🎉 🚀 launch"}},
		{name: "code span", src: "run `:rocket:` now\n",
			html: []string{"<code>:rocket:</code>"}, text: []string{"run :rocket: now"}},
		{name: "code block", src: "```\n:rocket:\n```\n\n    :tada:\n",
			html: []string{":rocket:\n", ":tada:\n"}, text: []string{":rocket:", ":tada:"}, notHTML: []string{"🚀", "🎉"}},
		{name: "unknown name", src: "a :not_an_emoji: b\n",
			html: []string{"a :not_an_emoji: b"}, text: []string{"a :not_an_emoji: b"}},
		{name: "github image without a character", src: "a :octocat: b\n",
			html: []string{":octocat:"}, text: []string{"a :octocat: b"}},
		{name: "times and urls", src: "at 10:30:00 see https://x.test/:rocket\n",
			html: []string{"10:30:00", "https://x.test/:rocket"}, text: []string{"at 10:30:00 see https://x.test/:rocket"}},
	}
	p := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: tt.src})
			if err != nil {
				t.Fatal(err)
			}
			if err := checkShape(res.Document.Root); err != nil {
				t.Fatal(err)
			}
			var text []string
			for _, b := range res.Document.Root.Children {
				text = append(text, b.PlainText())
			}
			all := strings.Join(text, "\n")
			for _, want := range tt.html {
				if !strings.Contains(res.Document.HTML, want) {
					t.Errorf("HTML %q lacks %q", res.Document.HTML, want)
				}
			}
			for _, no := range tt.notHTML {
				if strings.Contains(res.Document.HTML, no) {
					t.Errorf("HTML %q holds %q", res.Document.HTML, no)
				}
			}
			for _, want := range tt.text {
				if !strings.Contains(all, want) {
					t.Errorf("tree text %q lacks %q", all, want)
				}
			}
		})
	}
}

// TestEmojiHeadingID checks that a heading's id is made from its source,
// shortcode included, as GitHub makes it, while its outline text shows
// the character.
func TestEmojiHeadingID(t *testing.T) {
	res, err := New(nil).Parse(t.Context(), &stage.ParseRequest{Markdown: "# Release :rocket:\n"})
	if err != nil {
		t.Fatal(err)
	}
	want := stage.Heading{Level: 1, Text: "Release 🚀", ID: "release-rocket"}
	if len(res.Document.Outline) != 1 || res.Document.Outline[0] != want {
		t.Fatalf("outline = %+v, want %+v", res.Document.Outline, want)
	}
	if res.Document.Title != "Release 🚀" {
		t.Errorf("title = %q", res.Document.Title)
	}
}
