package markdown

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestEnvRows: each row's \tag of an environment of rows is taken out
// of the TeX, multline is written as gather, and anything else prints as
// source, as the converter knows neither \tag nor multline.
func TestEnvRows(t *testing.T) {
	for _, tc := range []struct {
		tex, env, rest string
		tags           []string
		ok             bool
	}{
		{`\begin{align} a &= b \tag{1} \\ c &= d \tag*{B} \end{align}`, "align", `\begin{align} a &= b   \\ c &= d   \end{align}`, []string{"(1)", "B"}, true},
		{`\begin{gather} a \\ b \tag{2} \\ \end{gather}`, "gather", `\begin{gather} a \\ b   \\ \end{gather}`, []string{"", "(2)"}, true},
		{`\begin{align*} a \\ b \end{align*}`, "align*", `\begin{align*} a \\ b \end{align*}`, nil, true},
		{`\begin{multline} a \tag{3} \\ b \\ c \end{multline}`, "multline", `\begin{gather} a   \\ b \\ c \end{gather}`, []string{"", "", "(3)"}, true},
		{`\begin{multline*} a \\ b \end{multline*}`, "multline*", `\begin{gather*} a \\ b \end{gather*}`, nil, true},
		{"% note\n\\begin{align} a \\tag{1} \\label{x} \\\\ \\notag \\end{align}", "align", "% note\n\\begin{align} a   \\label{x} \\\\ \\notag \\end{align}", []string{"(1)"}, true},
		// A nested environment's rows and a group's \\ are not rows.
		{`\begin{align} \begin{matrix} a \\ b \end{matrix} \tag{1} \\ \substack{c \\ d} \tag{2} \end{align}`, "align", `\begin{align} \begin{matrix} a \\ b \end{matrix}   \\ \substack{c \\ d}   \end{align}`, []string{"(1)", "(2)"}, true},
		{`\begin{align} a \tag{1} \tag{2} \end{align}`, "", "", nil, false},
		{`\begin{align} {a \tag{1}} \end{align}`, "", "", nil, false},
		{`\begin{align} \begin{aligned} a \tag{1} \end{aligned} \end{align}`, "", "", nil, false},
		{`\begin{align} a \\ \tag{2} \end{align}`, "", "", nil, false},
		{`\begin{multline} a \tag{1} \\ b \tag{2} \end{multline}`, "", "", nil, false},
		{`\begin{align} a \tag{\ref{x}} \end{align}`, "", "", nil, false},
		{`\begin{align} a \end{gather}`, "", "", nil, false},
		// Not one environment: the formula is left to displayTag and
		// the converter.
		{`x = \begin{aligned} a \end{aligned} \tag{1}`, "", `x = \begin{aligned} a \end{aligned} \tag{1}`, nil, true},
		{`\begin{align} a \end{align} x`, "", `\begin{align} a \end{align} x`, nil, true},
		{`\begin{align} a \tag{1}`, "", `\begin{align} a \tag{1}`, nil, true},
	} {
		env, rest, tags, ok := envRows([]byte(tc.tex))
		if env != tc.env || ok != tc.ok || ok && string(rest) != tc.rest || fmt.Sprint(tags) != fmt.Sprint(tc.tags) || (tags == nil) != (tc.tags == nil) {
			t.Errorf("%s:\n got %q %q %q %v\nwant %q %q %q %v", tc.tex, env, rest, tags, ok, tc.env, tc.rest, tc.tags, tc.ok)
		}
	}
}

// TestMathRows: an align numbered per row and a multline are converted
// (both printed as source). The HTML spans the line with the tags in
// a last column and multline's rows aligned left, centred and right; the
// tree has <mlabeledtr> rows and multline's table 100% wide with each
// cell's columnalign; the TeX stays the author's. Inline, where TeX has
// no tags and no line to span, both still print as source.
func TestMathRows(t *testing.T) {
	align := `\begin{align} a &= b \tag{1} \\ c &= d \end{align}`
	multline := `\begin{multline} a + b \\ + c \\ + d = 0 \tag{2} \end{multline}`
	src := "$$\n" + align + "\n$$\n\n$$\n" + multline + "\n$$\n\nInline $" + multline + "$.\n"
	resp, err := New(nil).Parse(context.Background(), &stage.ParseRequest{Markdown: src})
	if err != nil {
		t.Fatal(err)
	}
	html := resp.Document.HTML
	for _, want := range []string{
		`<mtable columnalign="center" displaystyle="true" rowalign="center" style="width:100%"><mtr>` + rowSpacerCell,
		rowTagCell + `<mtext>(1)</mtext></mtd></mtr><mtr>` + rowSpacerCell,
		rowTagCell + `</mtd></mtr></mtable>`,
		`<mtd style="width:100%;text-align:-webkit-left;padding-left:1em;padding-right:0"><mi>a</mi>`,
		`<mtd style="width:100%;text-align:-webkit-center;padding-left:0;padding-right:0"><mo>+</mo><mi>c</mi>`,
		`<mtd style="width:100%;text-align:-webkit-right;padding-left:0;padding-right:1em"><mo>+</mo><mi>d</mi>`,
		multlineTagCell + `<mtext>(2)</mtext></mtd></mtr></mtable>`,
		`<annotation encoding="application/x-tex">\begin{multline} a + b \\ + c \\ + d = 0 \tag{2} \end{multline}</annotation>`,
		`Inline <code class="math-tex">` + multline + `</code>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %s:\n%s", want, html)
		}
	}
	want := map[string][]string{
		align: {`<mlabeledtr><mtd><mtext>(1)</mtext></mtd><mtd columnalign="right"><mi>a</mi></mtd>`, `</mlabeledtr><mtr><mtd columnalign="right"><mi>c</mi>`},
		multline: {`<mtable columnalign="center" displaystyle="true" rowalign="center" width="100%"><mtr><mtd columnalign="left"><mi>a</mi>`,
			`<mtr><mtd columnalign="center"><mo>+</mo><mi>c</mi>`,
			`<mlabeledtr><mtd><mtext>(2)</mtext></mtd><mtd columnalign="right"><mo>+</mo><mi>d</mi>`},
	}
	seen := 0
	resp.Document.Root.Walk(func(n *stage.Node) bool {
		if n.Attr("math") == "" {
			return true
		}
		if n.Attr("math") != "display" {
			if n.Attr("mathml") != "" {
				t.Errorf("inline %q converted", n.Text)
			}
			return true
		}
		seen++
		if n.Attr("mathtag") != "" {
			t.Errorf("%q: mathtag %q: its tags are its rows'", n.Text, n.Attr("mathtag"))
		}
		for _, w := range want[n.Text] {
			if !strings.Contains(n.Attr("mathml"), w) {
				t.Errorf("%q: mathml lacks %s:\n%s", n.Text, w, n.Attr("mathml"))
			}
		}
		return true
	})
	if seen != 2 {
		t.Errorf("%d display formulas, want 2", seen)
	}
}

// TestMathRowsHostile: an align of as many tagged rows as a formula's
// 8 KiB hold, and a document of such formulas, convert within the
// document's bounds, the formulas past them printed as source; rows the
// converter does not write as the TeX has them print as source.
func TestMathRowsHostile(t *testing.T) {
	row := `x \tag{9} \\ `
	n := (maxFormulaBytes - 40) / len(row)
	big := `\begin{align}` + strings.Repeat(row, n) + `x\end{align}`
	start := time.Now()
	html, tree, _, ok := toTaggedMathML([]byte(big), true, newMathBudget(context.Background()))
	if !ok {
		t.Fatal("an align of tagged rows within 8 KiB printed as source")
	}
	if got := strings.Count(html, "<mtext>(9)</mtext>"); got != n {
		t.Errorf("%d tags in the HTML, want %d", got, n)
	}
	if got := strings.Count(tree, "<mlabeledtr>"); got != n {
		t.Errorf("%d labelled rows in the tree, want %d", got, n)
	}
	var md strings.Builder
	for range 200 {
		md.WriteString("$$\n" + big + "\n$$\n\n")
	}
	resp, err := New(nil).Parse(context.Background(), &stage.ParseRequest{Markdown: md.String()})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
	converted, source := 0, 0
	resp.Document.Root.Walk(func(n *stage.Node) bool {
		if n.Attr("math") != "" {
			if n.Attr("mathml") != "" {
				converted++
			} else {
				source++
			}
		}
		return true
	})
	if converted == 0 || source == 0 {
		t.Errorf("%d converted, %d as source: want the document's bounds to stop conversion part way", converted, source)
	}
	// \\[2pt] before the end writes no empty row in TeX, but the
	// converter's count of rows is checked, not trusted.
	if _, _, _, ok := toTaggedMathML([]byte(`\begin{align} a \tag{1} \\ b \tag{2} \\[2pt] \end{align}`), true, newMathBudget(context.Background())); ok {
		if h, _, _, _ := toTaggedMathML([]byte(`\begin{align} a \tag{1} \\ b \tag{2} \\[2pt] \end{align}`), true, newMathBudget(context.Background())); strings.Count(h, "<mtr>") != 2 {
			t.Errorf("rows and tags disagree: %s", h)
		}
	}
	if _, ok := finishRows(`<math><mtable><mtr><mtd><mi>a</mi></mtd></mtr></mtable></math>`, true, false, []string{"(1)", "(2)"}); ok {
		t.Error("two tags for a table of one row were written")
	}
}
