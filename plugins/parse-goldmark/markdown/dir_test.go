package markdown

import (
	"context"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestDirAuto: the HTML's blocks carry dir="auto", as GitHub's do, so that
// Chromium lays a Hebrew paragraph out right to left; inside a list item
// or quote, paragraphs and headings follow their container, whose
// direction a browser would otherwise resolve from no text at all.
func TestDirAuto(t *testing.T) {
	for _, tc := range []struct{ name, md, html string }{
		{"paragraph", "שלום.\n", "<p dir=\"auto\">שלום.</p>\n"},
		{"heading keeps its id first", "# כותרת\n", "<h1 id=\"כותרת\" dir=\"auto\">כותרת</h1>\n"},
		{"tight list", "- א\n- ב\n", "<ul dir=\"auto\">\n<li>א</li>\n<li>ב</li>\n</ul>\n"},
		{"ordered list from 3", "3. א\n", "<ol start=\"3\" dir=\"auto\">\n<li>א</li>\n</ol>\n"},
		{"task list", "- [ ] א\n", "<ul class=\"contains-task-list\" dir=\"auto\">\n<li class=\"task-list-item\"><input disabled=\"\" type=\"checkbox\"> א</li>\n</ul>\n"},
		{"loose list follows the list", "- א\n\n- ב\n", "<ul dir=\"auto\">\n<li>\n<p>א</p>\n</li>\n<li>\n<p>ב</p>\n</li>\n</ul>\n"},
		{"quote follows the quote", "> # א\n> ב\n", "<blockquote dir=\"auto\">\n<h1 id=\"א\">א</h1>\n<p>ב</p>\n</blockquote>\n"},
		{"code block has none", "```\nx\n```\n", "<pre><code>x\n</code></pre>\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := New(nil).Parse(context.Background(), &stage.ParseRequest{Markdown: tc.md})
			if err != nil {
				t.Fatal(err)
			}
			if res.Document.HTML != tc.html {
				t.Errorf("HTML of %q:\n got %q\nwant %q", tc.md, res.Document.HTML, tc.html)
			}
		})
	}
}
