package themes

import (
	"strings"
	"testing"
)

// FuzzExtractStyles: whatever the fragment, every style element found
// moves to the head whole, as a style element whose text cannot end it
// early, and nothing else moves: what is left and what moved add up to no
// more than was sent.
func FuzzExtractStyles(f *testing.F) {
	for _, s := range []string{
		"<style>p{color:red}</style><p>x</p>",
		`<STYLE media="print">a{}</STYLE >b`,
		`<style media="x" onload="y">a</style>`,
		"<style>unclosed",
		"<!--<style>no</style>--><style>yes</style>",
		"<!--><style>a</style>",
		"<script>'<style>'</script><style>b</style>",
		`<div title="<style>">x</div>`,
		`<style =" >a</style>`,
		"<style>a</stylex></style>",
		"<textarea><style>x</style></textarea>",
		"<plaintext><style>",
		"<svg><style><img src=x></style></svg>",
		"<style>a</style\n>b</style>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		styles, rest := extractStyles(s)
		moved := 0
		for _, st := range styles {
			if !strings.HasPrefix(st, "<style") || !strings.HasSuffix(st, "</style>") {
				t.Fatalf("not a style element: %q", st)
			}
			_, body, _ := strings.Cut(st, ">")
			body = strings.TrimSuffix(body, "</style>")
			if again, _ := extractStyles(st); len(again) != 1 || again[0] != st {
				t.Fatalf("style %q reads as %q", st, again)
			}
			moved += len(body)
		}
		if moved+len(rest) > len(s) {
			t.Fatalf("%d bytes moved and %d left of %d", moved, len(rest), len(s))
		}
		if len(styles) == 0 && rest != s {
			t.Fatalf("no style, yet the fragment changed: %q -> %q", s, rest)
		}
	})
}
