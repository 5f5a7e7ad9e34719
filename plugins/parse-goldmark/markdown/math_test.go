package markdown

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/plugins/internal/threadcpu"
	"github.com/mdpress/mdpress/sdk/stage"
)

// mathOf returns the math nodes of the tree: their style and TeX.
func mathOf(root *stage.Node) []string {
	var out []string
	root.Walk(func(n *stage.Node) bool {
		if m := n.Attr("math"); m != "" {
			out = append(out, m+":"+n.Text)
		}
		return true
	})
	return out
}

// TestMathGitHubRules follows GitHub's documented rules for what is math.
func TestMathGitHubRules(t *testing.T) {
	cases := []struct {
		name, src string
		math      []string
		html      []string // substrings of the HTML
	}{
		{"inline", "The sum $x+y$ here.", []string{"inline:x+y"}, []string{"<math", "<mi>x</mi>"}},
		{"backtick form", "Stars $`a*b*c`$ stay.", []string{"inline:a*b*c"}, []string{"<mi>b</mi>"}},
		{"no emphasis inside", "Keep $a*b*c$ whole.", []string{"inline:a*b*c"}, nil},
		{"underscores", "Keep $x_1 + y_1$ whole.", []string{"inline:x_1 + y_1"}, []string{"<msub>"}},
		{"github dollar in math", "This expression uses `\\$` to display a dollar sign: $`\\sqrt{\\$4}`$", []string{`inline:\sqrt{\$4}`}, []string{"<msqrt>"}},
		{"github dollar in span", "To split <span>$</span>100 in half, we calculate $100/2$", []string{"inline:100/2"}, []string{"<span>$</span>100 in half"}},
		{"across a soft break", "Then $a +\nb$ and $`c\nd`$ and $$e\nf$$ end.", []string{"inline:a +\nb", "inline:c\nd", "display:e\nf"}, []string{"<mi>b</mi>", "<mi>d</mi>", "<mi>f</mi>"}},
		{"not across paragraphs", "Pay $5.\n\nThen x$ and $y$.", []string{"inline:y"}, nil},
		{"unclosed over lines", "A $`x\nand $$ y\nthen $z$.", []string{"inline:z"}, nil},
		{"less than", "So $a<b$ holds.", []string{"inline:a<b"}, []string{"<mo>&lt;</mo>"}},
		{"currency", "It costs $5 and $10 today.", nil, []string{"$5 and $10"}},
		{"currency closing digit", "Between $20,000 and $30,000.", nil, []string{"$20,000 and $30,000"}},
		{"space after opening", "A $ x$ is not math.", nil, []string{"$ x$"}},
		{"math after a lone dollar", "A $ x$ then $y$.", []string{"inline:y"}, nil},
		{"math after unclosed forms", "Open $`a and $$ b then $y$.", []string{"inline:y"}, nil},
		{"space before closing", "A $x $ is not math.", nil, []string{"$x $"}},
		{"escaped dollar", `Cost \$5 and $y$.`, []string{"inline:y"}, []string{"$5"}},
		{"escaped dollar inside", `Here $\$x$ is math.`, []string{`inline:\$x`}, nil},
		{"code span", "Code `$x$` stays.", nil, []string{"<code>$x$</code>"}},
		{"display in paragraph", "See $$\\sum_{i=1}^n i^2$$ there.", []string{`display:\sum_{i=1}^n i^2`}, []string{`display="block"`}},
		{"display block one line", "$$\\frac{a}{b}$$\n", []string{`display:\frac{a}{b}`}, []string{"<mfrac>", `class="math-display"`}},
		{"display block", "$$\n\\sqrt{2}\n$$\n", []string{`display:\sqrt{2}`}, []string{"<msqrt>"}},
		{"two one-line blocks", "$$a$$\n\n$$b$$\n", []string{"display:a", "display:b"}, nil},
		{"math fence", "```math\n\\sqrt{3}\n```\n", []string{`display:\sqrt{3}`}, []string{"<msqrt>", "<mn>3</mn>"}},
		{"other fence", "```go\n$x$\n```\n", nil, []string{"$x$"}},
		{"unclosed", "Only $x here.", nil, []string{"$x here"}},
		{"bad tex", "Broken $\\frac{a$ here.", []string{`inline:\frac{a`}, []string{`<code class="math-tex">\frac{a</code>`}},
		{"html in text", `A $\text{<div>x}$ b.`, []string{`inline:\text{<div>x}`}, []string{`<code class="math-tex">\text{&lt;div&gt;x}</code>`}},
		{"macro definition", `A $\def\a{x}\a$ b.`, []string{`inline:\def\a{x}\a`}, []string{`<code class="math-tex">`}},
	}
	p := New(nil)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := p.Parse(context.Background(), &stage.ParseRequest{Markdown: tc.src})
			if err != nil {
				t.Fatal(err)
			}
			if got := mathOf(resp.Document.Root); strings.Join(got, "|") != strings.Join(tc.math, "|") {
				t.Errorf("math %q, want %q", got, tc.math)
			}
			for _, h := range tc.html {
				if !strings.Contains(resp.Document.HTML, h) {
					t.Errorf("HTML lacks %q:\n%s", h, resp.Document.HTML)
				}
			}
			if len(tc.math) == 0 && strings.Contains(resp.Document.HTML, "<math") {
				t.Errorf("MathML where there is no math:\n%s", resp.Document.HTML)
			}
			if err := checkShape(resp.Document.Root); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestMathUnclosedLinear: a line of dollars that open no math is read
// once, not from every dollar to its end.
//
// Timed against 1 MiB without dollars, parsed in the same run: on a loaded
// machine under the race detector a linear parse took 3 s, where reading
// from every dollar took minutes (2.5 for "$5 "). Both are counted in the
// CPU the parsing thread used, as the math budget is: on the wall, "$$ a "
// took 4-5 s under CPU load for its 2 s of CPU, and the test failed.
func TestMathUnclosedLinear(t *testing.T) {
	now, release := threadcpu.Clock()
	defer release()
	parse := func(unit string) time.Duration {
		src := strings.Repeat(unit, (1<<20)/len(unit))
		start := now()
		if _, err := New(nil).Parse(context.Background(), &stage.ParseRequest{Markdown: src}); err != nil {
			t.Fatal(err)
		}
		return now() - start
	}
	for _, unit := range []string{"$5 ", "$` ", "$$ a ", "$5\n", "$`\n"} {
		base := parse(strings.ReplaceAll(unit, "$", "s"))
		// "$$ a " closes: 1 MiB of it is ~100,000 formulas, converted
		// until the document's math budget (maxDocMathTime) runs out.
		if d := parse(unit); d > 10*base+maxDocMathTime+time.Second {
			t.Errorf("1 MiB of %q took %v, the same without dollars %v", unit, d, base)
		}
	}
}

// TestMathBounds: formulas past the bounds are printed as source, and a
// document full of the costliest formulas still parses quickly.
//
// The parses are timed in the CPU the parsing thread used, which the math
// budget counts: on the wall, a loaded machine (pinned to one core beside
// a busy loop, under the race detector) took 7.5-10 s for the 2 MiB that a
// quiet one parses in under 5, and the test failed.
func TestMathBounds(t *testing.T) {
	now, release := threadcpu.Clock()
	defer release()
	p := New(nil)
	long := "$$" + strings.Repeat(`\sqrt{`, maxFormulaBytes/6+1) + "x" + strings.Repeat("}", maxFormulaBytes/6+1) + "$$\n"
	resp, err := p.Parse(context.Background(), &stage.ParseRequest{Markdown: long})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(resp.Document.HTML, "<math") {
		t.Errorf("a formula over %d bytes was converted", maxFormulaBytes)
	}
	// Just under the limit, nested as deep as the limit lets it.
	n := (maxFormulaBytes - 10) / 7
	deep := "$$" + strings.Repeat(`\sqrt{`, n) + "x" + strings.Repeat("}", n) + "$$\n\n"
	var b strings.Builder
	for b.Len() < 2<<20 {
		b.WriteString(deep)
	}
	start, wall := now(), time.Now()
	resp, err = p.Parse(context.Background(), &stage.ParseRequest{Markdown: b.String()})
	if err != nil {
		t.Fatal(err)
	}
	d := now() - start
	t.Logf("%d KiB of formulas: %v of CPU, %v on the wall", b.Len()>>10, d, time.Since(wall))
	if d > maxDocMathTime+3*time.Second {
		t.Errorf("parse took %v of CPU", d)
	}
	if got, max := strings.Count(resp.Document.HTML, "<math"), maxDocMathBytes/len(deep)+1; got == 0 || got > max {
		t.Errorf("%d formulas converted, want 1..%d", got, max)
	}
	bomb := `\def\a{xxxxxxxxxx}\def\b{\a\a\a\a}\def\c{\b\b\b\b}\def\d{\c\c\c\c}\def\e{\d\d\d\d}\def\f{\e\e\e\e}\def\g{\f\f\f\f}\def\h{\g\g\g\g}\h`
	start = now()
	if _, err := p.Parse(context.Background(), &stage.ParseRequest{Markdown: "$$" + bomb + "$$\n"}); err != nil {
		t.Fatal(err)
	}
	if d := now() - start; d > time.Second {
		t.Errorf("a macro bomb took %v of CPU", d)
	}
}

// FuzzMathML: no TeX within the formula limit panics the converter, takes
// long, or gets anything but MathML into the HTML.
func FuzzMathML(f *testing.F) {
	for _, s := range []string{`\sum_{i=1}^n i^2`, `\frac{a}{b}`, `\begin{matrix}a&b\\c&d\end{matrix}`, `\text{<b>}`, `\text{</mrow></math>} \tag{1}`,
		`\left(\sqrt[3]{x}\right)`, `\ce{H2O}`, `\operatorname{f}`, `x^{y^{z^{w}}}`, `\overbrace{a}^{b}`, `a + b = c`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tex string) {
		// In the thread's CPU, as the math budget counts: on the wall, a
		// loaded machine failed inputs that take 10 ms.
		now, release := threadcpu.Clock()
		defer release()
		start := now()
		for _, display := range []bool{false, true} {
			if out, tree, ok := toMathML([]byte(tex), display, newMathBudget(context.Background())); ok {
				again, againTree, ok := cleanMathML(out)
				if !ok || again != out {
					t.Fatalf("not clean MathML: %q", out)
				}
				// An inline formula's HTML is cut into one <math> per piece
				// (breakInline), while the tree keeps it whole: only an
				// uncut formula's HTML reads back as the tree.
				if strings.Count(out, "<math") == 1 && againTree != tree {
					t.Fatalf("the HTML %q reads back as %q, not the tree's %q", out, againTree, tree)
				}
				if _, again, ok := cleanMathML(tree); !ok || again != tree {
					t.Fatalf("the tree's MathML is not clean: %q", tree)
				}
			}
		}
		if d := now() - start; d > time.Second {
			t.Fatalf("%d bytes took %v of CPU", len(tex), d)
		}
	})
}

// TestMathParts: a document parsed in parts (render-fpdf's way) gives the
// tree of the whole, math blocks with a blank line in them included.
func TestMathParts(t *testing.T) {
	p := tinyParts()
	for _, src := range []string{
		"Intro $x$.\n\n$$\na\n\nb\n$$\n\nAfter $y$.\n",
		"$$\n\\sum\n$$\n\nText.\n\n```math\nq\n\nr\n```\n\nEnd.\n",
		"$$\nopen to the end\n\nStill here.\n",
	} {
		checkParts(t, p, src)
	}
}

// TestMathTreeMathML: a converted formula's node carries the compact
// MathML, the HTML's without the TeX annotation and browser-only
// attributes, and keeps its TeX as Text; one printed as source carries
// none, so a renderer falls back to the source exactly where Chromium does.
func TestMathTreeMathML(t *testing.T) {
	src := "Inline $a^2$ and $$\\frac{1}{2}$$ then $\\frac{a$.\n\n$$\n\\sqrt{x}\n$$\n\n```math\n\\sum_i i\n```\n"
	resp, err := New(nil).Parse(context.Background(), &stage.ParseRequest{Markdown: src})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		`a^2`:         `<math display="inline"><mrow><msup><mi>a</mi><mn>2</mn></msup></mrow></math>`,
		`\frac{1}{2}`: `<math display="block"><mrow><mfrac><mn>1</mn><mn>2</mn></mfrac></mrow></math>`,
		`\frac{a`:     "",
		`\sqrt{x}`:    `<math display="block"><mrow><msqrt><mi>x</mi></msqrt></mrow></math>`,
		`\sum_i i`:    `<math display="block"><mrow><mrow><munder><mo largeop="true" movablelimits="true">∑</mo><mi>i</mi></munder></mrow><mi>i</mi></mrow></math>`,
	}
	seen := 0
	resp.Document.Root.Walk(func(n *stage.Node) bool {
		if n.Attr("math") == "" {
			return true
		}
		seen++
		w, ok := want[n.Text]
		if !ok {
			t.Errorf("unexpected math node %q", n.Text)
		}
		if got := n.Attr("mathml"); got != w {
			t.Errorf("%q: mathml %q, want %q", n.Text, got, w)
		}
		return true
	})
	if seen != len(want) {
		t.Errorf("%d math nodes, want %d", seen, len(want))
	}
	if got := strings.Count(resp.Document.HTML, "<math"); got != 4 {
		t.Errorf("%d formulas in the HTML, want 4", got)
	}
}

// TestMathBudgetAcrossParts: a document parsed in parts (render-fpdf's
// way, where the tree's MathML is what it lays out) is held to one
// document's math budget, not one per part: past its first 256 KiB of TeX
// formulas stay source, as they do parsed whole.
func TestMathBudgetAcrossParts(t *testing.T) {
	formula := "$$\n" + strings.Repeat(`\frac{a}{b}+`, 80) + "x\n$$\n\n"
	src := strings.Repeat(formula, 2*maxDocMathBytes/len(formula))
	count := func(roots ...*stage.Node) int {
		n := 0
		for _, r := range roots {
			r.Walk(func(n2 *stage.Node) bool {
				if n2.Attr("mathml") != "" {
					n++
				}
				return true
			})
		}
		return n
	}
	whole, err := New(nil).Parse(t.Context(), &stage.ParseRequest{Markdown: src, SkipHTML: true})
	if err != nil {
		t.Fatal(err)
	}
	p := New(nil)
	p.parts = partSizes{first: 4 << 10, max: 16 << 10}
	parts, _, err := parseParts(t.Context(), p, src)
	if err != nil {
		t.Fatal(err)
	}
	// The parse whole converts as many, unless the budget's 2 s run out
	// first on a loaded machine: the bound is what the parts must keep.
	max := maxDocMathBytes/(len(formula)-8) + 1
	if got, whole := count(parts...), count(whole.Document.Root); got > max || got < max/4 || len(parts) < 10 {
		t.Errorf("%d formulas converted in %d parts (%d parsed whole); want at most %d", got, len(parts), whole, max)
	}
}

// TestMathInlineBreaks: an inline formula is cut after its top-level
// relations and binary operators, one <math> per piece, so that Chromium
// may break the line there; a sign, an operator inside a group and a
// display formula are not cut.
func TestMathInlineBreaks(t *testing.T) {
	pieces := func(md string) []string {
		t.Helper()
		resp, err := New(nil).Parse(context.Background(), &stage.ParseRequest{Markdown: md})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range regexp.MustCompile(`<math[^>]*>(.*?)</math>`).FindAllStringSubmatch(resp.Document.HTML, -1) {
			out = append(out, regexp.MustCompile(`<annotation.*?</annotation>|<[^>]*>`).ReplaceAllString(m[1], ""))
		}
		return out
	}
	for md, want := range map[string][]string{
		"$a + b = c$":                       {"a+", "b=", "c"},
		"$f(x) = -x^2$":                     {"f(x)=", "−x2"},
		"$(-a) \\le b$":                     {"(−a)≤", "b"},
		"$\\frac{a+b}{2}$":                  {"a+b2"},
		"$f(x, y)$":                         {"f(x,y)"},
		"$x$":                               {"x"},
		"$$a + b = c$$":                     {"a+b=c"},
		"$$\na + b = c\n$$":                 {"a+b=c"},
		"$\\left( a + b \\right)$":          {"(a+b)"},
		"$\\{a+b\\} = \\lvert c+d \\rvert$": {"{a+b}=", "|c+d|"},
		"$(a+b)$":                           {"(a+", "b)"},
	} {
		if got := pieces(md); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%q: %q, want %q", md, got, want)
		}
	}
	// Each piece is a whole <math> element of the formula's attributes.
	resp, err := New(nil).Parse(context.Background(), &stage.ParseRequest{Markdown: "$a + b$"})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(resp.Document.HTML, `<math class="math-textstyle" display="inline"`); n != 2 {
		t.Errorf("%d <math> elements in %s", n, resp.Document.HTML)
	}
}

// TestMathFunctionSpace: a function's name is followed by the function
// application operator, spaced a thin space by its rspace, before an
// ordinary atom (a letter, a number, another function), in the HTML
// Chromium lays out and in the tree alike; not before a delimiter, an
// operator or what an operator begins, nor between a name and its
// scripts. A thin <mspace> comes before a name after an ordinary atom
// or a closing delimiter. The converter's lspace on the <mi>, which
// Chromium ignores, was all it had: Chromium printed "sinx", "2sin".
func TestMathFunctionSpace(t *testing.T) {
	const fa = `<mo lspace="0" rspace="0.1667em">` + "\u2061" + `</mo>`
	const sp = `<mspace width="0.1667em"/>`
	for _, c := range []struct{ tex, want string }{
		{`\sin x`, `<mrow><mi lspace="0.11111em">sin</mi>` + fa + `<mi>x</mi></mrow>`},
		{`\log 2n`, `<mrow><mi lspace="0.11111em">log</mi>` + fa + `<mn>2</mn><mi>n</mi></mrow>`},
		{`\max_z h`, `<mrow><mrow><munder><mi lspace="0.11111em" movablelimits="true">max</mi><mi>z</mi></munder></mrow>` + fa + `<mi>h</mi></mrow>`},
		{`\operatorname{argmax} f`, `<mrow><mi lspace="0.11111em" mathvariant="normal">argmax</mi>` + fa + `<mi>f</mi></mrow>`},
		{`\sin^2 x`, `<mrow><msup><mi lspace="0.11111em">sin</mi><mn>2</mn></msup>` + fa + `<mi>x</mi></mrow>`},
		{`\sin\cos x`, `<mrow><mi lspace="0.11111em">sin</mi>` + fa + `<mi lspace="0.11111em">cos</mi>` + fa + `<mi>x</mi></mrow>`},
		{`e^{\sin x}`, `<mrow><msup><mi>e</mi><mrow><mi lspace="0.11111em">sin</mi>` + fa + `<mi>x</mi></mrow></msup></mrow>`},
		{`\sin(x)`, `<mrow><mi lspace="0.11111em">sin</mi><mo form="prefix" stretchy="false">(</mo><mi>x</mi><mo form="postfix" stretchy="false">)</mo></mrow>`},
		{`\sin\left(x\right)`, `<mrow><mi lspace="0.11111em">sin</mi><mrow><mo fence="true" form="prefix" stretchy="true">(</mo><mi>x</mi><mo fence="true" form="postfix" stretchy="true">)</mo></mrow></mrow>`},
		{`\sin -x`, `<mrow><mi lspace="0.11111em">sin</mi><mo>−</mo><mi>x</mi></mrow>`},
		{`a\sin`, `<mrow><mi>a</mi>` + sp + `<mi lspace="0.11111em">sin</mi></mrow>`},
		// Before a name: after an ordinary atom or a closing delimiter,
		// not after an operator or another name.
		{`2\sin^2 x`, `<mrow><mn>2</mn>` + sp + `<msup><mi lspace="0.11111em">sin</mi><mn>2</mn></msup>` + fa + `<mi>x</mi></mrow>`},
		{`(a)\log n`, `<mo form="postfix" stretchy="false">)</mo>` + sp + `<mi lspace="0.11111em">log</mi>` + fa},
		{`y=\sin x`, `<mrow><mi>y</mi><mo>=</mo><mi lspace="0.11111em">sin</mi>` + fa + `<mi>x</mi></mrow>`},
		{`(\sin x)`, `<mrow><mo form="prefix" stretchy="false">(</mo><mi lspace="0.11111em">sin</mi>` + fa + `<mi>x</mi><mo form="postfix" stretchy="false">)</mo></mrow>`},
	} {
		html, tree, ok := toMathML([]byte(c.tex), true, newMathBudget(context.Background()))
		if !ok {
			t.Errorf("%s: not converted", c.tex)
			continue
		}
		if want := `<math display="block">` + c.want + `</math>`; !strings.Contains(tree, c.want) || strings.HasPrefix(c.want, "<mrow>") && tree != want {
			t.Errorf("%s: tree\n%s\nwant\n%s", c.tex, tree, want)
		}
		if !strings.Contains(html, c.want) {
			t.Errorf("%s: HTML\n%s\nwant it to hold\n%s", c.tex, html, c.want)
		}
	}
}

// TestMathCellAlign: a table cell's alignment reaches Chromium as the
// -webkit- value, which aligns the block its content is laid out as;
// text-align right and center did not move it: aligned's left column and
// gather's rows stood flush left.
func TestMathCellAlign(t *testing.T) {
	for _, c := range []struct{ tex, want string }{
		{`\begin{aligned} a &= b \\ b+c &= d \end{aligned}`, "text-align:-webkit-right"},
		{`\begin{gather} a \\ b+c \end{gather}`, "text-align:-webkit-center"},
		{`\begin{pmatrix} 1 & 100 \end{pmatrix}`, "text-align:-webkit-center"},
	} {
		html, _, ok := toMathML([]byte(c.tex), true, newMathBudget(context.Background()))
		if !ok {
			t.Fatalf("%s: not converted", c.tex)
		}
		if !strings.Contains(html, c.want) || regexp.MustCompile(`text-align:\s*(left|right|center)`).MatchString(html) {
			t.Errorf("%s: want %s, no plain text-align, in\n%s", c.tex, c.want, html)
		}
	}
}

// TestMathCalligraphicNotName: a \mathcal or \mathscr letter, which the
// converter ends with a variation selector (ℱ U+FE00), is one letter, not
// a function's name: TeX puts no space around it. spaceFunctions spaced
// it as \sin: "2 ℒ" and "ℱ x" on Chromium.
func TestMathCalligraphicNotName(t *testing.T) {
	const fa = `<mo lspace="0" rspace="0.1667em">` + "\u2061" + `</mo>`
	const sp = `<mspace width="0.1667em"/>`
	for _, c := range []struct{ tex, want string }{
		{`\mathcal{F}x`, `<mrow><mi>ℱ︀</mi><mi>x</mi></mrow>`},
		{`2\mathcal{L}`, `<mrow><mn>2</mn><mi>ℒ︀</mi></mrow>`},
		{`\mathcal{AB}`, `<mrow><mi>𝒜︀</mi><mi>ℬ︀</mi></mrow>`},
		{`\mathscr{F}\sin x`, `<mrow><mi>ℱ︁</mi>` + sp + `<mi lspace="0.11111em">sin</mi>` + fa + `<mi>x</mi></mrow>`},
	} {
		_, tree, ok := toMathML([]byte(c.tex), false, newMathBudget(context.Background()))
		if want := `<math display="inline">` + c.want + `</math>`; !ok || tree != want {
			t.Errorf("%s: tree\n%s\nwant\n%s", c.tex, tree, want)
		}
	}
}
