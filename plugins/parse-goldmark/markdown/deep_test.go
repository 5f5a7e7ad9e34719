package markdown

import (
	"fmt"
	"html"
	"slices"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestDeepNesting feeds nesting far past every limit. Each input must parse
// without error, give a tree no deeper than maxDepth and of a valid shape,
// and keep its text in both the tree and the HTML. Speed is measured by
// BenchmarkParseDeep; a quadratic parse would make this test take minutes.
func TestDeepNesting(t *testing.T) {
	const n = 10_000
	var quoteLines, stair strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&quoteLines, "%s line%d\n", strings.Repeat(">", 1+i%150), i)
	}
	for i := range 300 {
		fmt.Fprintf(&stair, "%s- step%d\n", strings.Repeat("  ", i), i)
	}
	tests := []struct {
		name  string
		src   string
		texts []string // their words must appear in the tree's text and the HTML, in order
	}{
		{"quotes", strings.Repeat(">", n) + " deep text", []string{"deep text"}},
		{"spaced quotes", strings.Repeat("> ", n) + "deep text", []string{"deep text"}},
		{"bullets", strings.Repeat("- ", n) + "deep text", []string{"deep text"}},
		{"ordered", strings.Repeat("1. ", n) + "deep text", []string{"deep text"}},
		{"mixed", strings.Repeat("> * 2) ", n/3) + "deep text", []string{"deep text"}},
		{"task items", strings.Repeat("- [x] ", n) + "deep text", []string{"deep text"}},
		// goldmark keeps only the outermost of nested definitions of one
		// label; the case is here for its speed.
		{"footnote definitions", "See[^a].\n\n" + strings.Repeat("[^a]: ", n) + "deep text", []string{"See"}},
		{"quote lines", quoteLines.String(), []string{"line0", "line149", "line999"}},
		{"indented lists", stair.String(), []string{"step0", "step100", "step299"}},
		{"emphasis", strings.Repeat("*", n) + "deep text" + strings.Repeat("*", n), []string{"deep text"}},
		{"strong and struck", strings.Repeat("**~~a ", n) + "deep text" + strings.Repeat(" b~~**", n), []string{"a a", "deep text", "b b"}},
		// Each "]" may walk what its label holds (measure does not tell
		// what goldmark walks, or reads as text), so the label budget
		// admits them hundreds deep.
		{"images", strings.Repeat("![", 1000) + "deep text" + strings.Repeat("](x.png)", 1000), []string{"deep text"}},
		{"links in images", strings.Repeat("![x [", 500) + "deep text" + strings.Repeat("](l) y](i)", 500), []string{"x x", "deep text", "y y"}},
		{"table in deep quotes", strings.Repeat("> ", 200) + "| head |\n" + strings.Repeat("> ", 200) + "|---|\n" + strings.Repeat("> ", 200) + "| *cell* text |\n", []string{"head", "cell text"}},
	}
	p := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: tt.src})
			if err != nil {
				t.Fatal(err)
			}
			doc := res.Document
			if d := depthOf(doc.Root); d > DefaultMaxDepth {
				t.Errorf("tree depth %d, want at most %d", d, DefaultMaxDepth)
			}
			if err := checkShape(doc.Root); err != nil {
				t.Error(err)
			}
			want := words(strings.Join(tt.texts, " "))
			if miss := missingInOrder(want, textWords(doc.Root)); miss != "" {
				t.Errorf("tree text lost %s", miss)
			}
			if miss := missingInOrder(want, words(html.UnescapeString(doc.HTML))); miss != "" {
				t.Errorf("HTML lost %s", miss)
			}
		})
	}
}

// TestFlattenKeepsText parses one document with the smallest allowed
// depth and with the default, and expects the same words in the same
// order: flattening drops containers, never text.
func TestFlattenKeepsText(t *testing.T) {
	var b strings.Builder
	for i := range 24 {
		q := strings.Repeat("> ", i)
		fmt.Fprintf(&b, "%s- [x] item%d with *emphasis **strong ~~struck [link%d](https://example.com/%d)~~***\n", q, i, i, i)
		fmt.Fprintf(&b, "%s  ![alt%d *a*](img%d.png \"title%d\") `code%d` <b>raw%d</b>\n", q, i, i, i, i, i)
		fmt.Fprintf(&b, "%s\n%s  | h%d | g%d |\n%s  |---|:-:|\n%s  | c%d | d%d |\n%s\n", q, q, i, i, q, q, i, i, q)
		fmt.Fprintf(&b, "%s  ```go\n%s  fmt.Println(%d)\n%s  ```\n%s\n", q, q, i, q, q)
	}
	src := b.String()
	deep, err := New(nil).Parse(t.Context(), &stage.ParseRequest{Markdown: src})
	if err != nil {
		t.Fatal(err)
	}
	shallowParser := New(nil)
	if _, err := shallowParser.Configure(t.Context(), &stage.ConfigureRequest{Config: []byte(`{"maxDepth": 16}`)}); err != nil {
		t.Fatal(err)
	}
	shallow, err := shallowParser.Parse(t.Context(), &stage.ParseRequest{Markdown: src})
	if err != nil {
		t.Fatal(err)
	}
	if d := depthOf(deep.Document.Root); d <= 16 {
		t.Fatalf("the input is only %d deep; it must exceed the small limit", d)
	}
	if d := depthOf(shallow.Document.Root); d > 16 {
		t.Fatalf("tree depth %d with maxDepth 16", d)
	}
	if err := checkShape(shallow.Document.Root); err != nil {
		t.Fatal(err)
	}
	want, got := textWords(deep.Document.Root), textWords(shallow.Document.Root)
	if !slices.Equal(want, got) {
		t.Fatalf("flattened tree has %d words, the full one %d; first loss: %s", len(got), len(want), missingInOrder(want, got))
	}
	if deep.Document.HTML != shallow.Document.HTML {
		t.Error("maxDepth changed the HTML; it bounds only the tree")
	}
}

// textWords are the words of the tree's text nodes, code and raw HTML.
func textWords(root *stage.Node) []string {
	var out []string
	root.Walk(func(n *stage.Node) bool {
		out = append(out, words(n.Text)...)
		return true
	})
	return out
}
