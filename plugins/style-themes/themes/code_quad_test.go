package themes

import (
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestHighlightCodeLinear: a body of openers that never close, or that
// one closer far away ends, costs time linear in its length; a search
// from each opener to the next closer would be quadratic (minutes for a
// 10 MiB body).
func TestHighlightCodeLinear(t *testing.T) {
	p := stage.CodePalette(githubPalette)
	for name, body := range map[string]string{
		"unclosed":        strings.Repeat(`<pre><code class="language-go">x`, 100_000),
		"one closer":      strings.Repeat(`<pre><code class="language-go">x`, 100_000) + codeClose,
		"no end of class": strings.Repeat(`<pre><code class="language-`+strings.Repeat("g", 20), 100_000),
	} {
		start := time.Now()
		if got := highlightCode(body, p); got != body {
			t.Errorf("%s: the body changed", name)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s: %d bytes took %v", name, len(body), took)
		}
	}
}
