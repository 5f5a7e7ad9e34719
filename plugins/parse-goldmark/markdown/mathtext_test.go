package markdown

import (
	"context"
	"slices"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestMathText: a formula in a heading reads in the PDF's title and
// bookmarks as math typed on one line, not as TeX source nor as its
// characters run together.
func TestMathText(t *testing.T) {
	for _, tc := range []struct{ tex, want string }{
		{`e^{i\pi}+1=0`, "e^(iπ)+1=0"},
		{`x_1`, "x_1"},
		{`x^{12}_{ij}`, "x_(ij)^12"},
		{`\sum_{k=1}^n k = \frac{n(n+1)}{2}`, "∑_(k=1)^n k=(n(n+1))/2"},
		{`\sqrt{x^2+y^2}`, "√(x^2+y^2)"},
		{`\sqrt[3]{8}`, "∛8"},
		{`\hat{x} \cdot \vec{v}`, "x\u0302⋅v\u20d7"},
		{`\sin x \int_0^1 f(x)\,dx`, "sin x ∫_0^1 f(x) dx"},
		{`\mathbb{R}^n \text{ if } a \le b`, "ℝ^n if a≤b"},
		{`\begin{pmatrix}a&b\\c&d\end{pmatrix}`, "(a, b; c, d)"},
		{`E=mc^2`, "E=mc^2"},
		{`a \sin^2 x`, "a sin^2 x"},
		{`\max_z h(z)`, "max_z h(z)"},
		{`\sin(x)`, "sin(x)"},
		{`x^2 y`, "x^2 y"},
	} {
		_, ml, ok := toMathML([]byte(tc.tex), false, newMathBudget(context.Background()))
		if !ok {
			t.Fatalf("%s: not converted", tc.tex)
		}
		if got := mathText(ml); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.tex, got, tc.want)
		}
	}
}

// TestOutlineMath: the title and outline carry a heading's formula in
// plain form, the tree keeps its TeX source for the page, and a formula
// past the headings' bounds keeps its source in the outline too.
func TestOutlineMath(t *testing.T) {
	resp, err := New(nil).Parse(context.Background(), &stage.ParseRequest{
		Markdown: "# Euler $e^{i\\pi}+1=0$\n\n## Cost $O(n^2)$ and `code`\n\nText $x^2$.\n"})
	if err != nil {
		t.Fatal(err)
	}
	res := resp.Document
	if res.Title != "Euler e^(iπ)+1=0" {
		t.Errorf("title %q", res.Title)
	}
	if len(res.Outline) != 2 || res.Outline[1].Text != "Cost O(n^2) and code" {
		t.Errorf("outline %+v", res.Outline)
	}
	var tex []string
	res.Root.Walk(func(n *stage.Node) bool {
		if n.Attr("math") != "" {
			tex = append(tex, n.Text)
		}
		return true
	})
	if want := []string{`e^{i\pi}+1=0`, `O(n^2)`, `x^2`}; !slices.Equal(tex, want) {
		t.Errorf("the tree's math %q, want the TeX %q", tex, want)
	}

	// A formula the converter did not take (past the document's bounds,
	// or refused) carries no MathML and keeps its source in the outline,
	// as on the page; one it took is not converted again.
	_, tree, ok := toMathML([]byte(`\alpha^2`), false, newMathBudget(context.Background()))
	if !ok {
		t.Fatal("not converted")
	}
	root := &stage.Node{Kind: stage.KindDocument}
	for _, ml := range []string{tree, tree, ""} {
		attrs := map[string]string{"math": "inline"}
		if ml != "" {
			attrs["mathml"] = ml
		}
		root.Children = append(root.Children, &stage.Node{Kind: stage.KindHeading, Attrs: map[string]string{"level": "1"},
			Children: []*stage.Node{{Kind: stage.KindCodeSpan, Text: `\alpha^2`, Attrs: attrs}}})
	}
	_, hs := outline(root)
	var got []string
	for _, h := range hs {
		got = append(got, h.Text)
	}
	if want := []string{"α^2", "α^2", `\alpha^2`}; !slices.Equal(got, want) {
		t.Errorf("outline past the bounds %q, want %q", got, want)
	}
}
