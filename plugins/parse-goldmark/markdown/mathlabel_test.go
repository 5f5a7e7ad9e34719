package markdown

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// labelDoc refers to its labels before and after them, from inline and
// display math, by \eqref and \ref, to a formula's tag, a \tag*, an
// align's rows, a multline and a ```math block; to an unknown key, a
// label defined twice, and labels that are no labels: in code, in a
// comment, on a formula without a tag.
const labelDoc = "Forward $\\eqref{euler}$ and $\\ref{euler}$.\n\n" +
	"$$\ne^{i\\pi} + 1 = 0 \\label{euler} \\tag{2}\n$$\n\n" +
	"Back $\\eqref{euler}$, star $\\eqref{star}$ $\\ref{star}$, rows $\\eqref{r1}$ $\\eqref{r2}$, " +
	"multline $\\eqref{ml}$, fence $\\eqref{fence}$.\n\n" +
	"Unknown $\\eqref{nope}$ $\\ref{nope}$, twice $\\eqref{twice}$, code $\\eqref{code}$, " +
	"comment $\\eqref{comment}$, untagged $\\eqref{untagged}$.\n\n" +
	"$$a = b \\tag*{P} \\label{star}$$\n\n" +
	"$$\n\\begin{align} a &= b \\label{r1} \\tag{3a} \\\\ c &= d \\tag{3b} \\label{r2} \\\\ e &= f \\end{align}\n$$\n\n" +
	"$$\n\\begin{multline} a \\label{ml} \\\\ + b = 0 \\tag{4} \\end{multline}\n$$\n\n" +
	"```math\nx = y \\tag{5} \\label{fence}\n```\n\n" +
	"$$x \\tag{6} \\label{twice}$$\n\n$$y \\tag{7} \\label{twice}$$\n\n" +
	"`$$x \\tag{8} \\label{code}$$` and\n\n```\n$$y \\tag{8} \\label{code}$$\n```\n\n" +
	"$$\nz \\tag{9} % \\label{comment}\n$$\n\n$$w \\label{untagged}$$\n"

// labelWant is what each inline formula of labelDoc prints, in order.
var labelWant = []string{"(2)", "2", "(2)", "(P)", "P", "(3a)", "(3b)", "(4)", "(5)",
	"(???)", "???", "(6)", "(???)", "(???)", "(???)"}

// TestMathRefs: \eqref and \ref print the tag their label names, in the
// HTML and in the tree, with Parse and with ParseParts cut at every line,
// where a part refers to a label in a later one; an unknown key prints
// (???), as MathJax prints it. They printed the formula as source.
func TestMathRefs(t *testing.T) {
	p := tinyParts()
	resp, err := p.Parse(context.Background(), &stage.ParseRequest{Markdown: labelDoc})
	if err != nil {
		t.Fatal(err)
	}
	html := resp.Document.HTML
	if strings.Contains(html, `code class="math-tex"`) || strings.Contains(html, `pre class="math-tex"`) {
		t.Errorf("a formula printed as source:\n%s", html)
	}
	at := 0
	for _, w := range labelWant {
		want := `<mtext>` + w + `</mtext></mrow><annotation`
		if i := strings.Index(html[at:], want); i < 0 {
			t.Errorf("HTML lacks %s after byte %d:\n%s", want, at, html[at:])
		} else {
			at += i + len(want)
		}
	}
	for _, want := range []string{
		`<annotation encoding="application/x-tex">\eqref{euler}</annotation>`,
		`<annotation encoding="application/x-tex">e^{i\pi} + 1 = 0 \label{euler} \tag{2}</annotation>`,
		`white-space: nowrap; text-align: right;">(2)</span>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %s", want)
		}
	}
	inline := func(root *stage.Node) []string {
		var got []string
		root.Walk(func(n *stage.Node) bool {
			if n.Attr("math") == "inline" {
				got = append(got, n.Attr("mathml"))
			}
			return true
		})
		return got
	}
	check := func(name string, got []string) {
		t.Helper()
		if len(got) != len(labelWant) {
			t.Fatalf("%s: %d inline formulas, want %d", name, len(got), len(labelWant))
		}
		for i, w := range labelWant {
			if want := `<mtext>` + w + `</mtext>`; !strings.Contains(got[i], want) {
				t.Errorf("%s: formula %d: mathml %q, want %s", name, i, got[i], want)
			}
		}
	}
	check("Parse", inline(resp.Document.Root))
	parts, _, err := parseParts(context.Background(), p, labelDoc)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) < 2 {
		t.Fatalf("%d parts, want the references and labels in several", len(parts))
	}
	var got []string
	for _, part := range parts {
		got = append(got, inline(part)...)
	}
	check("ParseParts", got)
	checkParts(t, p, labelDoc)
}

// TestMathLabels: the labels a display formula defines, with the tag as
// written; a formula whose tag is not read defines none.
func TestMathLabels(t *testing.T) {
	for _, tc := range []struct {
		tex  string
		want map[string]string
	}{
		{`x \label{a} \tag{1}`, map[string]string{"a": "1"}},
		{`x \tag*{(A)} \label { a b }`, map[string]string{" a b ": "(A)"}},
		{`x \label{a{b}\}c} \tag{1}`, map[string]string{`a{b}\}c`: "1"}},
		{`x \label{a}`, map[string]string{}},
		{`x \tag{\alpha} \label{a}`, map[string]string{}},
		{`x \\label{a} \tag{1}`, map[string]string{}},
		{`\begin{gather} a \label{a} \\ b \tag{2} \label{b} \end{gather}`, map[string]string{"b": "2"}},
		{`\begin{align} a \tag{1} \label{a} \tag{2} \end{align}`, map[string]string{}},
		{`\begin{multline*} a \\ b \tag{M} \\ c \label{m} \end{multline*}`, map[string]string{"m": "M"}},
	} {
		got := map[string]string{}
		formulaLabels([]byte(tc.tex), func(key, raw string) { got[key] = raw })
		if len(got) != len(tc.want) {
			t.Errorf("%s: labels %q, want %q", tc.tex, got, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: labels %q, want %q", tc.tex, got, tc.want)
			}
		}
	}
}

// TestMathRefsHostile: 100,000 labels, 1 MB of \eqref and tags of HTML
// parse in linear time; the labels kept are bounded, the formulas past
// the document's math bounds print as source, and a tag's text is
// escaped as \tag's is.
func TestMathRefsHostile(t *testing.T) {
	var md strings.Builder
	md.WriteString("$\\eqref{k0}$ $\\ref{k99999}$\n\n")
	for md.Len() < 1<<20 {
		md.WriteString("$" + strings.Repeat(`\eqref{k1}`, 400) + "$\n\n")
	}
	for i := range 100_000 {
		md.WriteString("$$x \\tag{1} \\label{k" + strings.Repeat("{", i%3) + strings.Repeat("}", i%3) + strconv.Itoa(i) + "}$$\n\n")
	}
	src := md.String()
	p := New(nil)
	start := time.Now()
	resp, err := p.Parse(context.Background(), &stage.ParseRequest{Markdown: src, SkipHTML: true})
	if err != nil {
		t.Fatal(err)
	}
	parts, _, err := parseParts(context.Background(), p, src)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
	doc := p.md.Parser().Parse(textReader([]byte(src)))
	if n := len(mathLabels(context.Background(), doc, []byte(src))); n != maxLabels {
		t.Errorf("%d labels kept, want %d", n, maxLabels)
	}
	for _, root := range []*stage.Node{resp.Document.Root, parts[0]} {
		var first []string
		root.Walk(func(n *stage.Node) bool {
			if n.Attr("math") == "inline" && len(first) < 2 {
				first = append(first, n.Attr("mathml"))
			}
			return true
		})
		if len(first) != 2 || !strings.Contains(first[0], "<mtext>(1)</mtext>") || !strings.Contains(first[1], "<mtext>???</mtext>") {
			t.Errorf("the first label and one past the bound print %q, want (1) and ???", first)
		}
	}
	converted, source := 0, 0
	resp.Document.Root.Walk(func(n *stage.Node) bool {
		if n.Attr("math") == "inline" {
			if n.Attr("mathml") != "" {
				converted++
			} else {
				source++
			}
		}
		return true
	})
	if converted == 0 || source == 0 {
		t.Errorf("%d references converted, %d as source: want the document's bounds to stop conversion part way", converted, source)
	}

	html := `<b>"x"</b>`
	resp, err = p.Parse(context.Background(), &stage.ParseRequest{Markdown: "$$x \\tag{" + html + "} \\label{<i>}$$\n\n$\\eqref{<i>}$ $\\ref{<i>}$\n"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<mtext>(&lt;b&gt;&#34;x&#34;&lt;/b&gt;)</mtext></mrow>`, `<mtext>&lt;b&gt;&#34;x&#34;&lt;/b&gt;</mtext></mrow>`} {
		if !strings.Contains(resp.Document.HTML, want) {
			t.Errorf("HTML lacks %s:\n%s", want, resp.Document.HTML)
		}
	}
	if strings.Contains(resp.Document.HTML, "<b>") || strings.Contains(resp.Document.HTML, "<i>") {
		t.Errorf("markup from a tag or label reached the HTML:\n%s", resp.Document.HTML)
	}
}
