package themes

import (
	"slices"
	"testing"
)

func TestExtractStyles(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		styles []string
		rest   string
	}{
		{"none", "<p>a</p>", nil, "<p>a</p>"},
		{"one", "<p>a</p><style>h1{}</style><p>b</p>", []string{"<style>h1{}</style>"}, "<p>a</p><p>b</p>"},
		{"at the start", "<style>x</style>rest", []string{"<style>x</style>"}, "rest"},
		{"two in order", "<style>a</style>m<style type=\"text/css\">b</style>", []string{"<style>a</style>", "<style>b</style>"}, "m"},
		{"upper case", "<STYLE Media=print>a</Style >z", []string{"<style>a</style>"}, "z"},
		{"markup inside is text", "<style>p::after{content:'<b>'}</style>", []string{"<style>p::after{content:'<b>'}</style>"}, ""},
		{"end tag needs a delimiter", "<style>a</styles></style>z", []string{"<style>a</styles></style>"}, "z"},
		{"unclosed runs to the end", "<p>a</p><style>h1{color:red}<p>b</p>", []string{"<style>h1{color:red}<p>b</p></style>"}, "<p>a</p>"},
		{"not a style tag", "<styles>a</styles><stylex>", nil, "<styles>a</styles><stylex>"},
		{"in a comment", "<!-- <style>a</style> -->z", nil, "<!-- <style>a</style> -->z"},
		{"abrupt comment", "<!--><style>a</style>", []string{"<style>a</style>"}, "<!-->"},
		{"unclosed comment", "<!-- <style>a</style>", nil, "<!-- <style>a</style>"},
		{"in a script", "<script>'<style>a</style>'</script>", nil, "<script>'<style>a</style>'</script>"},
		{"in a textarea", "<textarea><style>a</style></textarea><style>b</style>", []string{"<style>b</style>"}, "<textarea><style>a</style></textarea>"},
		{"in a template", "<template><style>a</style></template>", nil, "<template><style>a</style></template>"},
		{"in an attribute", `<div title="<style>a</style>">x</div>`, nil, `<div title="<style>a</style>">x</div>`},
		{"single-quoted attribute", `<a title='>' href=x><style>s</style></a>`, []string{"<style>s</style>"}, `<a title='>' href=x></a>`},
		{"in svg", "<svg><style>circle{}</style></svg>", []string{"<style>circle{}</style>"}, "<svg></svg>"},
		{"in noscript", "<noscript><style>a</style></noscript>", []string{"<style>a</style>"}, "<noscript></noscript>"},
		{"escaped in code", "<pre><code>&lt;style&gt;a&lt;/style&gt;</code></pre>", nil, "<pre><code>&lt;style&gt;a&lt;/style&gt;</code></pre>"},
		{"plaintext swallows", "<plaintext><style>a</style>", nil, "<plaintext><style>a</style>"},
		{"lone angle brackets", "a < b > c <3 <style>s</style>", []string{"<style>s</style>"}, "a < b > c <3 "},
		{"multibyte case", "İ<STYLE>x</STYLE>ß", []string{"<style>x</style>"}, "İß"},
		// An "=" where a browser expects an attribute name begins a name:
		// the tag ends at its first ">", and what the start tag held does
		// not travel to the head.
		{"equals before a name", "<style =\" >a{}</style>\"><!--</style>", []string{"<style>a{}</style>"}, "\"><!--</style>"},
		{"unquoted value with a quote", "<style a=b\">x</style>z", []string{"<style>x</style>"}, "z"},
		{"plain media kept", `<style media="print" onload="x">a</style>`, []string{`<style media="print">a</style>`}, ""},
		{"media with markup dropped", `<style media="x'><script>">a</style>`, []string{"<style>a</style>"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			styles, rest := extractStyles(tt.in)
			if !slices.Equal(styles, tt.styles) || rest != tt.rest {
				t.Fatalf("extractStyles(%q)\n got %q, %q\nwant %q, %q", tt.in, styles, rest, tt.styles, tt.rest)
			}
		})
	}
}
