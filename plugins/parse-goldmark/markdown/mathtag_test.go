package markdown

import (
	"context"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestDisplayTag: the common \tag is taken out of a display formula as
// the text it prints; any other stays in it (and the formula prints as
// source, as the converter does not know \tag).
func TestDisplayTag(t *testing.T) {
	for _, tc := range []struct{ tex, rest, tag string }{
		{`E = mc^2 \tag{1}`, `E = mc^2  `, "(1)"},
		{`\tag{2.3a} x`, `  x`, "(2.3a)"},
		{`x \tag*{(P)}`, `x  `, "(P)"},
		{`x \tag { A }`, `x  `, "(A)"},
		{`x \tag*{†}`, `x  `, "†"},
		{`x \tagged{1}`, `x \tagged{1}`, ""},
		{`x \tag{1} \tag{2}`, `x \tag{1} \tag{2}`, ""},
		{`{x \tag{1}}`, `{x \tag{1}}`, ""},
		{`\begin{align} x \tag{1} \end{align}`, `\begin{align} x \tag{1} \end{align}`, ""},
		{`x \tag{$\star$}`, `x \tag{$\star$}`, ""},
		{`x \tag{\ref{a}}`, `x \tag{\ref{a}}`, ""},
		{`x \tag{}`, `x \tag{}`, ""},
		{`x \tag 1`, `x \tag 1`, ""},
		{`x \tag{1`, `x \tag{1`, ""},
		{`x \\tag{1}`, `x \\tag{1}`, ""},
		// A comment's \tag is no tag, nor is a \begin in one a reason to
		// leave the formula's own.
		{`E = mc^2 % \tag{1}`, `E = mc^2 % \tag{1}`, ""},
		{"x % \\begin{align}\n\\tag{1}", "x % \\begin{align}\n ", "(1)"},
		{`x = 5\% \tag{1}`, `x = 5\%  `, "(1)"},
		{`x \tag{` + strings.Repeat("9", maxTagBytes+1) + `}`, `x \tag{` + strings.Repeat("9", maxTagBytes+1) + `}`, ""},
	} {
		rest, tag := displayTag([]byte(tc.tex))
		if string(rest) != tc.rest || tag != tc.tag {
			t.Errorf("%s: rest %q tag %q, want %q %q", tc.tex, rest, tag, tc.rest, tc.tag)
		}
	}
}

// TestMathTag: a tagged display formula, as a block or inside a
// paragraph, is converted; its HTML centres the formula in a flex row
// whose last cell is the tag, and its node carries the tag as mathtag.
// Inline, \tag is an error in TeX: the formula prints as source. The
// formula printed as source on both backends.
func TestMathTag(t *testing.T) {
	src := "$$E = mc^2 \\tag{1}$$\n\nSo $$a = b \\tag*{(P)}$$ and $x \\tag{2}$.\n"
	resp, err := New(nil).Parse(context.Background(), &stage.ParseRequest{Markdown: src})
	if err != nil {
		t.Fatal(err)
	}
	html := resp.Document.HTML
	for _, want := range []string{
		`<div class="math-display math-tagged" style="display: flex; flex-wrap: wrap; align-items: baseline; direction: ltr;"><span style="flex: 1 1 0; padding-inline-start: 1em; white-space: nowrap;"></span><math `,
		`<annotation encoding="application/x-tex">E = mc^2 \tag{1}</annotation></semantics></math><span class="math-tag" style="flex: 1 1 0; padding-inline-start: 1em; white-space: nowrap; text-align: right;">(1)</span></div>`,
		`So <span class="math-display-inline math-tagged" style="display: flex; flex-wrap: wrap; align-items: baseline; direction: ltr;"><span `,
		`<span class="math-tag" style="flex: 1 1 0; padding-inline-start: 1em; white-space: nowrap; text-align: right;">(P)</span></span> and <code class="math-tex">x \tag{2}</code>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %s:\n%s", want, html)
		}
	}
	want := map[string]string{`E = mc^2 \tag{1}`: "(1)", `a = b \tag*{(P)}`: "(P)", `x \tag{2}`: ""}
	resp.Document.Root.Walk(func(n *stage.Node) bool {
		if n.Attr("math") == "" {
			return true
		}
		tag, ok := want[n.Text]
		if !ok {
			t.Errorf("unexpected math node %q", n.Text)
		}
		if got := n.Attr("mathtag"); got != tag {
			t.Errorf("%q: mathtag %q, want %q", n.Text, got, tag)
		}
		if (n.Attr("mathml") != "") != (tag != "") {
			t.Errorf("%q: mathml %q", n.Text, n.Attr("mathml"))
		}
		delete(want, n.Text)
		return true
	})
	if len(want) > 0 {
		t.Errorf("no math nodes %v", want)
	}
}

// TestMathTagComment: a \tag in a TeX comment numbers nothing: the
// formula is converted, as the converter drops the comment, with no tag,
// as MathJax draws it. The formula printed (1) at the margin.
func TestMathTagComment(t *testing.T) {
	src := "$$\nE = mc^2 % \\tag{1}\n$$\n"
	resp, err := New(nil).Parse(context.Background(), &stage.ParseRequest{Markdown: src})
	if err != nil {
		t.Fatal(err)
	}
	if html := resp.Document.HTML; strings.Contains(html, "math-tag") || !strings.Contains(html, "<math") {
		t.Errorf("HTML:\n%s", html)
	}
	resp.Document.Root.Walk(func(n *stage.Node) bool {
		if n.Attr("math") != "" && (n.Attr("mathtag") != "" || n.Attr("mathml") == "") {
			t.Errorf("%q: mathtag %q, mathml %q", n.Text, n.Attr("mathtag"), n.Attr("mathml"))
		}
		return true
	})
}
