package themes

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

var tags = regexp.MustCompile(`<[^>]*>`)

func TestHighlightCode(t *testing.T) {
	p := stage.CodePalette(githubPalette)
	goBlock := "<pre><code class=\"language-go\">if a &lt; b &amp;&amp; s == &quot;&lt;/code&gt;&quot; {\n}\n</code></pre>"
	got := highlightCode(goBlock, p)
	if !strings.Contains(got, `<span class="hl-keyword">if</span>`) || !strings.Contains(got, `<span class="hl-string">`) {
		t.Errorf("the go block is not highlighted:\n%s", got)
	}
	// The text a browser shows is the same.
	if a, b := html.UnescapeString(tags.ReplaceAllString(got, "")), html.UnescapeString(tags.ReplaceAllString(goBlock, "")); a != b {
		t.Errorf("the block's text changed: %q, was %q", a, b)
	}
	for _, body := range []string{
		"<pre><code>if a {}\n</code></pre>",                                     // no language
		"<pre><code class=\"language-nosuch\">if a {}\n</code></pre>",           // unknown language
		"<pre><code class=\"language-go\">if <b>a</b> {}\n</code></pre>",        // the document's raw HTML inside
		"<pre><code class=\"language-go\" data-x=\"1\">if a {}\n</code></pre>",  // not the parser's markup
		"<pre><code class=\"language-go\">if a {}\n",                            // never closed
		"<p>text</p><pre><code class=\"language-go\">if a {}\n</pre></code><p>", // closed out of order
	} {
		if got := highlightCode(body, p); got != body {
			t.Errorf("%q became %q", body, got)
		}
	}
	// Chromium would read a CR and an LF in separate spans as two breaks.
	crlf := "<pre><code class=\"language-python\">x = 1  # one\r\ny = 2  # two\r\n</code></pre>"
	if got := highlightCode(crlf, p); strings.Contains(got, "\r") || !strings.Contains(got, `<span class="hl-comment">`) {
		t.Errorf("the CR LF block became %q", got)
	}
	// A <div> per line; a minified line of more coloured tokens than
	// maxLineSpans is written plain.
	long := strings.Repeat("1,", maxLineSpans+1)
	block := "<pre><code class=\"language-json\">[1]\n\n[" + long + "]\n</code></pre>"
	got = highlightCode(block, p)
	if n := strings.Count(got, `<div class="hl-line">`); n != 3 {
		t.Errorf("%d lines in %q", n, got)
	}
	if n := strings.Count(got, `<span class="hl-constant">`); n != 1 {
		t.Errorf("%d coloured numbers, want the first line's one", n)
	}
	if a, b := html.UnescapeString(tags.ReplaceAllString(got, "")), html.UnescapeString(tags.ReplaceAllString(block, "")); a != b {
		t.Errorf("the block's text changed: %q, was %q", a, b)
	}
	if got := highlightCode(goBlock, stage.CodePalette{}); got != goBlock {
		t.Errorf("highlighted without a palette: %q", got)
	}
}
