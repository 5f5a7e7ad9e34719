package markdown

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/plugins/internal/threadcpu"
	"github.com/mdpress/mdpress/sdk/stage"
)

// TestTeXCompat: the commands READMEs write as GitHub's MathJax reads them
// come out as that MathML, where the converter alone wrote an <merror>
// holding the command's name (the command vanished) or read them wrongly
// (\pmb as μ); those neither reads right print as their source.
func TestTeXCompat(t *testing.T) {
	for _, tc := range []struct {
		tex  string
		want []string // in the tree's MathML; none: printed as source
		not  []string
	}{
		{`\operatorname{argmax}_x f`, []string{`<msub><mi lspace="0.11111em" mathvariant="normal">argmax</mi><mi>x</mi></msub><mo lspace="0" rspace="0.1667em">` + "\u2061" + `</mo><mi>f</mi>`}, nil},
		{`\operatorname*{arg\,min}_x f`, []string{`<munder><mi lspace="0.11111em" mathvariant="normal" movablelimits="true">arg` + "\u2009" + `min</mi><mi>x</mi></munder>`}, nil},
		{`\operatorname{sgn}(x)`, []string{`>sgn</mi><mo form="prefix"`}, nil},
		{`\operatorname{d} x`, []string{`<mi lspace="0.11111em" mathvariant="normal">d</mi>`}, nil},
		{`\mathop{\mathrm{argmax}}\limits_x f`, []string{`<munder><mi lspace="0.11111em" mathvariant="normal" movablelimits="false">argmax</mi>`}, []string{"mathrm"}},
		{`\mathop{\mathrm{argmax}}_x f`, []string{`<munder><mi lspace="0.11111em" mathvariant="normal" movablelimits="true">argmax</mi>`}, []string{"mathrm"}},
		{`\mathop{argmax}_x f`, []string{`<munder><mo movablelimits="true" rspace="0">argmax</mo>`}, nil},
		{`\boxed{E=mc^2}`, []string{`<menclose notation="box"><mrow><mi>E</mi><mo>=</mo>`}, nil},
		{`\boxed{x}`, []string{`<menclose notation="box"><mi>x</mi></menclose>`}, nil},
		{`\fbox{ok}`, []string{`<menclose notation="box"><mtext>ok</mtext></menclose>`}, nil},
		{`\bm{x} + \bm\theta`, []string{`<mi>𝐱</mi>`, `<mi>𝛉</mi>`}, nil},
		{`\pmb{x}`, []string{`<mi>𝐱</mi>`}, []string{"μ"}},
		{`a \xrightarrow{f} b`, []string{`<mover><mo stretchy="true">⟶</mo><mi>f</mi></mover>`}, nil},
		{`a \xrightarrow[g]{f} b`, []string{`<munder><mrow><mover><mo stretchy="true">⟶</mo><mi>f</mi></mover></mrow><mi>g</mi></munder>`}, nil},
		{`a \xleftarrow{\bm{f}} b`, []string{`<mover><mo stretchy="true">⟵</mo><mi>𝐟</mi></mover>`}, nil},
		{`x \stackrel{\text{def}}{=} y`, []string{`<mover><mo stretchy="true">=</mo><mtext>def</mtext></mover>`}, nil},
		{`\textbf{bold} \mbox{box}`, []string{`<mtext>𝐛𝐨𝐥𝐝</mtext>`, `<mtext>box</mtext>`}, nil},
		{`\text{\textbf{x}}`, []string{`<mtext>textbf{x}</mtext>`}, nil},
		{`a + \dotsb + b, \dotsc`, []string{`<mi>⋯</mi>`, `<mi>…</mi>`}, nil},
		{`\mathrel{\stackrel{a}{=}} \mathbin{\oplus}`, []string{`<mover><mo stretchy="true">=</mo><mi>a</mi></mover>`, `<mo>⊕</mo>`}, nil},
		{`\begin{split} a &= b \\ &= c \end{split}`, []string{`<mtable`, `<mtd columnalign="left"><mo>=</mo><mi>c</mi></mtd>`}, []string{`\`, `&amp;`}},
		// gather's rows: a one-column table in display style, as many
		// rows as written (none for a \\ that ends the last, \\[4pt]'s
		// space dropped); a table nested in a row keeps its own rows.
		{`\begin{gather} a=\frac{1}{2} \\ b+c=d \end{gather}`, []string{`<mtable columnalign="center" displaystyle="true" rowalign="center"><mtr><mtd><mi>a</mi><mo>=</mo><mfrac><mn>1</mn><mn>2</mn></mfrac></mtd></mtr><mtr><mtd><mi>b</mi>`}, []string{`\`, "mdpress-"}},
		{`\begin{gather*} a \\[4pt] b \\ \end{gather*}`, []string{`<mtable columnalign="center" displaystyle="true" rowalign="center"><mtr><mtd><mi>a</mi></mtd></mtr><mtr><mtd><mi>b</mi></mtd></mtr></mtable>`}, []string{`4pt`, `<mtr><mtd></mtd></mtr>`}},
		{`x = \begin{gathered} a \\ b \end{gathered}`, []string{`<mi>x</mi><mo>=</mo><mtable columnalign="center" displaystyle="true" rowalign="center"><mtr><mtd><mi>a</mi></mtd></mtr><mtr><mtd><mi>b</mi></mtd></mtr></mtable>`}, nil},
		{`\begin{gather} f=\begin{cases} 1 & x \\ 0 \end{cases} \\ y \end{gather}`, []string{`<mtable columnalign="left" rowalign="center"><mtr><mtd><mn>1</mn></mtd><mtd><mi>x</mi></mtd></mtr><mtr><mtd><mn>0</mn></mtd></mtr></mtable></mrow></mtd></mtr><mtr><mtd><mi>y</mi></mtd></mtr></mtable>`}, nil},
		{`a = b \label{eq:one} \nonumber`, []string{`<mi>a</mi><mo>=</mo><mi>b</mi>`}, []string{"eq", "one"}},
		{`\cancel{x}`, []string{`<menclose notation="updiagonalstrike"><mi>x</mi></menclose>`}, nil},
		{`\varnothing`, []string{`<mi>∅</mi>`}, nil},
		// eqnarray's rows: right, centre, left, in display style.
		{`\begin{eqnarray} a &=& \frac{1}{2} \nonumber \\ c+d &\le& e \end{eqnarray}`, []string{`<mtable columnalign="right center left" columnlines="none none" displaystyle="true" rowalign="center"><mtr><mtd><mi>a</mi></mtd><mtd><mo>=</mo></mtd><mtd><mfrac><mn>1</mn><mn>2</mn></mfrac></mtd></mtr><mtr><mtd><mi>c</mi><mo>+</mo><mi>d</mi></mtd><mtd><mo>≤</mo></mtd><mtd><mi>e</mi></mtd></mtr></mtable>`}, []string{`\`, "&amp;"}},
		{`\begin{eqnarray*} x &=& 1 \end{eqnarray*}`, []string{`columnalign="right center left"`}, nil},
		// An alphabet inside another: the inner one, made bold by
		// \boldsymbol or \bm, as MathJax draws it; the converter wrote a
		// plain A.
		{`\boldsymbol{\mathcal{A}}`, []string{`<mi>𝓐</mi>`}, []string{`<mi>A</mi>`}},
		{`\bm{\mathcal{AB}}_i`, []string{`<msub><mrow><mi>𝓐</mi><mi>𝓑</mi></mrow><mi>i</mi></msub>`}, nil},
		{`\boldsymbol{ \mathfrak { g } }`, []string{`<mi>𝖌</mi>`}, nil},
		{`\mathbf{\mathcal{A}} x`, []string{"<mi>𝒜\uFE00</mi><mi>x</mi>"}, nil},
		{`\mathcal{\mathbf{A}}`, []string{`<mi>𝐀</mi>`}, nil},
		{`\boldsymbol{\mathbf{\mathcal{A}}}`, []string{"<mi>𝓐</mi>"}, nil},
		{`\boldsymbol{\mathcal{A}_1}`, []string{"<msub><mi>𝓐</mi><mn>𝟏</mn></msub>"}, nil},
		{`\mathbf{x \mathcal{L}} + \mathsf{\mathbb{R}^n}`, []string{"<mi>𝐱</mi><mi>ℒ</mi>", "<msup><mi>ℝ</mi><mi>𝗇</mi></msup>"}, nil},
		{`\mathrm{\mathcal{A}+b}`, []string{"<mi mathvariant=\"normal\">𝒜</mi>"}, nil},
		{`\mathbf{\mathcal{\alpha}}`, []string{"<mi>α"}, []string{"<mi>A</mi>"}},
		// Neither the converter nor the rewrite reads these: their source.
		{`a = b \tag{1}`, []string{`<mi>a</mi><mo>=</mo><mi>b</mi></mrow>`}, []string{"tag", "1"}},
		{`\begin{align} a &= b \tag{1} \\ c &= d \tag{2} \end{align}`, []string{`<mlabeledtr><mtd><mtext>(1)</mtext></mtd>`}, []string{"tag"}},
		{`\begin{align} a &= b \tag{1} \tag{2} \end{align}`, nil, nil},
		{`\begin{gather} a & b \end{gather}`, nil, nil},
		{`\begin{gather} a \end{aligned}`, nil, nil},
		{`\begin{multline} a \\ b \end{multline}`, []string{`<mtd columnalign="left"><mi>a</mi></mtd>`, `<mtd columnalign="right"><mi>b</mi></mtd>`}, nil},
		{`\begin{multline} a & b \end{multline}`, nil, nil},
		{`x = \begin{multline} a \\ b \end{multline}`, nil, nil},
		{`\begin{eqnarray*} a \\ b \end{eqnarray}`, nil, nil},
		{`x \hspace{1em} y`, nil, nil},
		{`\phantom{x}`, nil, nil},
		{`\xrightarrow`, nil, nil},
		{`\operatorname{\frac{a}{b}}`, nil, nil},
	} {
		html, tree, ok := toMathML([]byte(tc.tex), true, newMathBudget(context.Background()))
		if tc.want == nil {
			if ok {
				t.Errorf("%s: converted, want printed as source: %s", tc.tex, tree)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: printed as source", tc.tex)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(tree, w) {
				t.Errorf("%s: no %s in\n%s", tc.tex, w, tree)
			}
		}
		for _, w := range append(tc.not, "merror", "mdpress-") {
			if strings.Contains(tree, w) {
				t.Errorf("%s: %s in\n%s", tc.tex, w, tree)
			}
		}
		// The HTML's annotation is the author's TeX, for copying.
		if want := `<annotation encoding="application/x-tex">` + xmlEscape(tc.tex) + `</annotation>`; !strings.Contains(html, want) {
			t.Errorf("%s: annotation is not the source:\n%s", tc.tex, html)
		}
	}
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&#34;")
		case '\'':
			b.WriteString("&#39;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestTeXCompatChromium: what Chromium draws from the MathML is carried
// by it, since Chromium lays out <menclose> as a plain row: the box of
// \boxed and the stroke of \cancel are styles on it.
func TestTeXCompatChromium(t *testing.T) {
	html, _, ok := toMathML([]byte(`\boxed{x} + \cancel{y}`), false, newMathBudget(context.Background()))
	if !ok {
		t.Fatal("not converted")
	}
	for _, w := range []string{`<menclose notation="box" style="border:`, `<menclose notation="updiagonalstrike" style="background:linear-gradient(`} {
		if !strings.Contains(html, w) {
			t.Errorf("no %s in\n%s", w, html)
		}
	}
}

// TestMathTextEndTags: the converter copies \text{...} through
// unescaped, so MathML end tags in it closed elements the converter had
// not opened. In a formula that mdpress rewrites (a \tag, \boxed,
// \operatorname, an alphabet in another) more end tags than start tags
// panicked the parse, and the whole document was a 500 on both backends;
// in any other, Chromium printed the TeX annotation as text beside the
// formula, or nothing, as it drew nothing of MathML elements in \text.
// Such a formula prints as its source, as "\text{<div>}" does.
func TestMathTextEndTags(t *testing.T) {
	for _, tex := range []string{
		`\text{</mrow></mrow></math>} \tag{1}`,
		`\text{</mtext></mrow></semantics></math>} \boxed{x}`,
		`\text{</mrow></mrow></math>} \operatorname{foo} x`,
		`\text{</mrow></mrow></math>} \mathcal{\mathbf{A}}`,
		`\text{</math>} x`,
		`\text{</mrow>} x`,
		`\text{<mrow><mrow>} x`,
		`\text{</mi>} \sin x`,
		`\text{<mroot></mroot>}`,
		`\text{<mi>x</mi>} \tag{2}`,
	} {
		src := "$$" + tex + "$$\n\nand $" + tex + "$ inline.\n"
		resp, err := New(nil).Parse(context.Background(), &stage.ParseRequest{Markdown: src})
		if err != nil {
			t.Errorf("%s: %v", tex, err)
			continue
		}
		if html := resp.Document.HTML; strings.Contains(html, "<math") {
			t.Errorf("%s is converted:\n%s", tex, html)
		}
		resp.Document.Root.Walk(func(n *stage.Node) bool {
			if n.Attr("math") != "" && (n.Attr("mathml") != "" || n.Attr("mathtag") != "") {
				t.Errorf("%q: mathml %q, mathtag %q", n.Text, n.Attr("mathml"), n.Attr("mathtag"))
			}
			return true
		})
	}
}

// TestTeXCompatHostile: the rewrite opens no way into the HTML (the
// sanitizer still reads its result), reads its input once, and its
// output is held to the converter's bounds.
func TestTeXCompatHostile(t *testing.T) {
	for _, tex := range []string{
		`\operatorname{<script>alert(1)</script>}`,
		`\boxed{\text{<img src=x onerror=alert(1)>}}`,
		`\class{mdpress-op}{\mathrm{a}}\class{mdpress-boxed}{y}`,
		`\xrightarrow[</annotation><script>]{f}`,
		`\mathop{\text{"><iframe>}}`,
	} {
		html, tree, ok := toMathML([]byte(tex), true, newMathBudget(context.Background()))
		for _, s := range []string{html, tree} {
			if lower := strings.ToLower(s); strings.Contains(lower, "<script") || strings.Contains(lower, "<img") ||
				strings.Contains(lower, "<iframe") || strings.Contains(lower, "onload=") {
				t.Errorf("%s (converted %v): %s", tex, ok, s)
			}
		}
	}

	// Nested arguments and long runs of rewritten commands take time in
	// proportion to their length. Counted in the CPU this thread used,
	// as the conversions' budget is: on the wall, a loaded machine took
	// 41 ms for what a quiet one does in a few.
	now, release := threadcpu.Clock()
	defer release()
	for _, tex := range [][]byte{
		[]byte(strings.Repeat(`\boxed{`, 1000) + "x" + strings.Repeat("}", 1000)),
		[]byte(strings.Repeat(`\xrightarrow[`, 500) + strings.Repeat("]{f}", 500)),
		bytes.Repeat([]byte(`\operatorname*{a}`), 480),
		bytes.Repeat([]byte(`{`), 8000),
	} {
		start := now()
		for range 20 {
			rewriteTeX(tex)
		}
		if d := (now() - start) / 20; d > 20*time.Millisecond {
			t.Errorf("%.40s...: %v per rewrite", tex, d)
		}
	}

	// 2,000 \bm{x} are 12 KiB of TeX as rewritten, over the converter's
	// 8 KiB per formula though the source is under it.
	tex := bytes.Repeat([]byte(`\bm{x}`), 1300)
	if len(tex) > maxFormulaBytes {
		t.Fatal("the source itself is over the bound")
	}
	if _, _, ok := toMathML(tex, true, newMathBudget(context.Background())); ok {
		t.Error("a formula over the bound once rewritten was converted")
	}
	// The document's budget is spent by what the converter reads.
	b := newMathBudget(context.Background())
	if _, _, ok := toMathML([]byte(`\bm{x}`), true, b); !ok || b.tex != maxDocMathBytes-len(`\boldsymbol{x}`) {
		t.Errorf("budget left %d, want %d", b.tex, maxDocMathBytes-len(`\boldsymbol{x}`))
	}
}

// FuzzTeXCompat: no TeX makes the rewrite panic or its MathML escape the
// sanitizer, and the rewrite grows no formula past a few times its size.
func FuzzTeXCompat(f *testing.F) {
	for _, s := range []string{`\operatorname*{arg\,min}_x`, `\xrightarrow[a]{\bm b}`, `\boxed{\text{a}}`,
		`\begin{split}a&=b\end{split}`, `\mathop{\mathrm{x}}\limits`, `\label{a}\textbf{b}`, `\xleftarrow[{]}]{`, `\text{`,
		`\begin{gather}a\\[1pt]{b\\c}\begin{cases}d\\e\end{cases}\\\end{gather}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tex string) {
		out, _, ok := rewriteTeX([]byte(tex))
		if ok && len(out) > 8*len(tex)+64 {
			t.Fatalf("%d bytes rewritten as %d", len(tex), len(out))
		}
		html, _, ok := toMathML([]byte(tex), true, newMathBudget(context.Background()))
		if ok && strings.Contains(strings.ToLower(html), "<script") {
			t.Fatalf("script in %s", html)
		}
	})
}
