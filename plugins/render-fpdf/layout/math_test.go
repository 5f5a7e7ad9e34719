package layout

import (
	"context"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
	"github.com/mdpress/mdpress/sdk/stage"
)

// mathDoc lays out one display formula of the given MathML body and
// returns its text items by text, its lines, and the MathBegin item.
func mathDoc(t *testing.T, body string) (map[string]Item, []Item, Item) {
	t.Helper()
	node := with(&stage.Node{Kind: stage.KindCodeBlock, Text: "tex"}, "lang", "math", "math", "display",
		"mathml", `<math display="block">`+body+`</math>`)
	d := lay(t, node)
	glyphs := map[string]Item{}
	var lines []Item
	var begin Item
	for _, it := range d.Pages[0].Items {
		switch it.Kind {
		case Text:
			glyphs[it.Text] = it
		case Line:
			lines = append(lines, it)
		case MathBegin:
			begin = it
		}
	}
	if begin.Kind != MathBegin || begin.Text != "tex" {
		t.Fatalf("no formula laid out: %+v", d.Pages[0].Items)
	}
	return glyphs, lines, begin
}

// TestMathGeometry checks where the boxes put things, y growing down.
func TestMathGeometry(t *testing.T) {
	t.Run("scripts", func(t *testing.T) {
		g, _, begin := mathDoc(t, `<msubsup><mi>x</mi><mi>i</mi><mn>2</mn></msubsup>`)
		x, sub, sup := g["x"], g["i"], g["2"]
		if x.Y != begin.Y || sup.Y >= x.Y-2 || sub.Y <= x.Y+1 {
			t.Errorf("base at %.1f, superscript at %.1f, subscript at %.1f", x.Y, sup.Y, sub.Y)
		}
		if r := sup.Size / x.Size; r < 0.65 || r > 0.75 {
			t.Errorf("scripts at %.2f of the size", r)
		}
		if x.Face != fonts.Of(fonts.Serif, fonts.Italic) || sup.Face != fonts.Of(fonts.Serif, fonts.Regular) {
			t.Errorf("x in face %d, 2 in face %d: want italic and upright serif", x.Face, sup.Face)
		}
	})
	t.Run("fraction", func(t *testing.T) {
		g, lines, begin := mathDoc(t, `<mfrac><mn>12</mn><mn>345</mn></mfrac>`)
		num, den := g["12"], g["345"]
		if len(lines) != 1 {
			t.Fatalf("%d lines, want one bar", len(lines))
		}
		bar := lines[0]
		if !(num.Y < bar.Y && bar.Y < begin.Y && den.Y > begin.Y) {
			t.Errorf("numerator at %.1f, bar at %.1f, baseline %.1f, denominator at %.1f", num.Y, bar.Y, begin.Y, den.Y)
		}
		if bar.X > den.X || bar.X2 < den.X+3*den.Size*0.5 || num.X <= den.X {
			t.Errorf("bar %.1f-%.1f does not span the denominator at %.1f, or the numerator at %.1f is not centred", bar.X, bar.X2, den.X, num.X)
		}
	})
	t.Run("radical", func(t *testing.T) {
		g, lines, _ := mathDoc(t, `<msqrt><mn>56</mn></msqrt>`)
		if len(lines) != 4 {
			t.Fatalf("%d lines, want the sign's three strokes and the bar", len(lines))
		}
		r := g["56"]
		top := lines[3]
		if top.Y != top.Y2 || top.X > r.X || top.X2 < r.X+r.Size || top.Y >= r.Y-0.7*r.Size {
			t.Errorf("bar %+v is not over the radicand at (%.1f, %.1f)", top, r.X, r.Y)
		}
	})
	t.Run("limits", func(t *testing.T) {
		g, _, _ := mathDoc(t, `<munderover><mo largeop="true" movablelimits="true">∑</mo><mi>i</mi><mi>n</mi></munderover>`)
		sum, i, nn := g["∑"], g["i"], g["n"]
		if !(nn.Y < sum.Y-sum.Size*0.7 && i.Y > sum.Y) {
			t.Errorf("n at %.1f, ∑ at %.1f, i at %.1f: want limits over and under", nn.Y, sum.Y, i.Y)
		}
		if sum.Size < 1.3*i.Size/0.7 {
			t.Errorf("∑ at %.1f pt, text at %.1f: want a large operator", sum.Size, i.Size/0.7)
		}
	})
	t.Run("alphanumerics", func(t *testing.T) {
		g, _, _ := mathDoc(t, `<mi>𝐯</mi><mi>𝖠</mi>`)
		if g["v"].Face != fonts.Of(fonts.Serif, fonts.Bold) || g["A"].Face != fonts.Of(fonts.Sans, fonts.Regular) {
			t.Errorf("bold v and sans A drawn as %+v", g)
		}
		// Script (with \mathcal's variation selector), fraktur and
		// double-struck letters, those of the BMP too, in MathAlpha.
		g, _, _ = mathDoc(t, `<mi>𝒪︀</mi><mi>𝔤</mi><mi>𝔼</mi><mi>ℝ</mi><mn>𝟙</mn>`)
		for _, r := range "𝒪𝔤𝔼ℝ𝟙" {
			set, _ := testFonts()
			p, _ := set.MathAlphaRune(r)
			if it, ok := g[string(p)]; !ok || it.Face != fonts.MathAlpha {
				t.Errorf("%c not drawn in MathAlpha: %+v", r, g)
			}
		}
	})
	t.Run("accent", func(t *testing.T) {
		g, _, _ := mathDoc(t, `<mover accent="true"><mi>x</mi><mo stretchy="true">̇</mo></mover>`)
		x, dot := g["x"], g["˙"]
		// The dot's ink is 0.65 em above its baseline: its baseline sits
		// near the x's, not an x-height over it.
		if d := x.Y - dot.Y; d < -0.1*x.Size || d > 0.3*x.Size {
			t.Errorf("dot's baseline %.1f pt above x's", d)
		}
	})
}

// TestMathSpacing: relations and binary operators are spaced, a leading
// minus is not.
func TestMathSpacing(t *testing.T) {
	g, _, _ := mathDoc(t, `<mo>−</mo><mi>a</mi><mo>+</mo><mi>b</mi><mo>=</mo><mi>c</mi>`)
	set, _ := testFonts()
	adv := func(it Item) float64 {
		w := 0
		for _, r := range it.Text {
			w += set.Face(it.Face).Width(r)
		}
		return float64(w) * it.Size / 1000
	}
	gap := func(a, b string) float64 { return g[b].X - (g[a].X + adv(g[a])) }
	em := g["a"].Size
	if d := gap("−", "a"); d > 0.01 {
		t.Errorf("unary minus spaced %.2f pt", d)
	}
	if d := gap("a", "+"); d < 0.2*em || d > 0.25*em {
		t.Errorf("binary + spaced %.2f em", d/em)
	}
	if d := gap("b", "="); d < 0.26*em || d > 0.3*em {
		t.Errorf("relation = spaced %.2f em", d/em)
	}
}

// TestMathInlineLineGrows: a line holding a tall inline formula (\dfrac)
// is taller than one of text, and the formula sits on its baseline.
func TestMathInlineLineGrows(t *testing.T) {
	frac := `<math display="inline"><mfrac displaystyle="true"><mrow><mi>a</mi><mo>+</mo><mi>b</mi></mrow><mrow><mi>c</mi><mo>+</mo><mi>d</mi></mrow></mfrac></math>`
	long := strings.Repeat("word ", 40)
	d := lay(t, para(txt(long+"x "), with(&stage.Node{Kind: stage.KindCodeSpan, Text: "f"}, "math", "inline", "mathml", frac), txt(" "+long)))
	var bases []float64
	var formula Item
	for _, it := range d.Pages[0].Items {
		if it.Kind == Text && strings.HasPrefix(it.Text, "word") {
			bases = append(bases, it.Y)
		}
		if it.Kind == MathBegin {
			formula = it
		}
	}
	if len(bases) < 4 {
		t.Fatalf("%d lines", len(bases))
	}
	plain := bases[1] - bases[0]
	var grew bool
	for i := 1; i < len(bases); i++ {
		if bases[i]-bases[i-1] > plain*1.2 {
			grew = true
		}
	}
	if !grew {
		t.Errorf("no line grew for the fraction: baselines %v", bases)
	}
	found := false
	for _, b := range bases {
		found = found || b == formula.Y
	}
	if !found {
		t.Errorf("the formula's baseline %.1f is no line's: %v", formula.Y, bases)
	}
}

// TestMathEnclose: \boxed's frame is four rules round what it holds,
// \cancel's stroke one rule across it, rising left to right; a
// notation this backend does not draw prints the formula as its source.
// Without them every formula with \boxed or \cancel printed as source.
func TestMathEnclose(t *testing.T) {
	g, lines, _ := mathDoc(t, `<menclose notation="box"><mi>E</mi><mo>=</mo><mi>m</mi></menclose>`)
	e, m := g["E"], g["m"]
	if len(lines) != 4 {
		t.Fatalf("%d rules, want a frame of 4", len(lines))
	}
	var left, right, top, bottom float64 = 1e9, -1e9, 1e9, -1e9
	for _, l := range lines {
		left, right = min(left, l.X, l.X2), max(right, l.X, l.X2)
		top, bottom = min(top, l.Y, l.Y2), max(bottom, l.Y, l.Y2)
	}
	if left >= e.X || right <= m.X+m.W || top >= e.Y-e.Size*0.6 || bottom <= e.Y {
		t.Errorf("frame x %.1f-%.1f y %.1f-%.1f does not hold E (x %.1f, y %.1f) to m (x %.1f+%.1f)",
			left, right, top, bottom, e.X, e.Y, m.X, m.W)
	}

	g, lines, _ = mathDoc(t, `<menclose notation="updiagonalstrike"><mi>x</mi></menclose>`)
	x := g["x"]
	if len(lines) != 1 {
		t.Fatalf("%d rules, want one stroke", len(lines))
	}
	if s := lines[0]; !(s.X < s.X2 && s.Y > s.Y2 && s.X <= x.X+1 && s.Y >= x.Y) {
		t.Errorf("stroke %+v does not rise across x at %.1f,%.1f", s, x.X, x.Y)
	}

	node := with(&stage.Node{Kind: stage.KindCodeBlock, Text: `\sout{x}`}, "lang", "math", "math", "display",
		"mathml", `<math display="block"><menclose notation="horizontalstrike"><mi>x</mi></menclose></math>`)
	for _, it := range lay(t, node).Pages[0].Items {
		if it.Kind == MathBegin {
			t.Error("a notation not drawn was laid out")
		}
	}
}

// TestMathTallFence: \left( and \right) around a matrix taller than six
// times their glyph reach from its top row to its bottom one; scaled, the
// glyph stopped at six times its size and left rows sticking out.
func TestMathTallFence(t *testing.T) {
	var rows strings.Builder
	for i := range 12 {
		rows.WriteString("<mtr><mtd><mn>" + strconv.Itoa(i+10) + "</mn></mtd></mtr>")
	}
	g, lines, _ := mathDoc(t, `<mrow><mo fence="true" form="prefix" stretchy="true">(</mo><mtable columnalign="center" rowalign="center">`+
		rows.String()+`</mtable><mo fence="true" form="postfix" stretchy="true">)</mo></mrow>`)
	first, last := g["10"], g["21"]
	if len(lines) == 0 {
		t.Fatalf("no strokes: the fences are glyphs %+v, %+v", g["("], g[")"])
	}
	top, bottom := lines[0].Y, lines[0].Y
	left, right := lines[0].X, lines[0].X
	for _, l := range lines {
		top, bottom = min(top, l.Y, l.Y2), max(bottom, l.Y, l.Y2)
		left, right = min(left, l.X, l.X2), max(right, l.X, l.X2)
	}
	if top > first.Y-0.7*first.Size || bottom < last.Y+0.2*last.Size {
		t.Errorf("fences span %.1f-%.1f, rows from %.1f to %.1f", top, bottom, first.Y, last.Y)
	}
	if left > first.X || right < first.X+first.Size {
		t.Errorf("fences from x %.1f to %.1f do not enclose the rows at %.1f", left, right, first.X)
	}
}

// TestMathAlignedPair: aligned's "a &= b" joins its two cells as TeX
// does, "a = b" spaced as a relation, not a column gap apart.
func TestMathAlignedPair(t *testing.T) {
	g, _, _ := mathDoc(t, `<mrow><mtable columnalign="center" displaystyle="true" rowalign="center"><mtr>`+
		`<mtd columnalign="right"><mi>a</mi></mtd><mtd columnalign="left"><mo>=</mo><mi>b</mi></mtd></mtr>`+
		`<mtr><mtd columnalign="right"></mtd><mtd columnalign="left"><mo>=</mo><mi>d</mi></mtd></mtr></mtable></mrow>`)
	set, _ := testFonts()
	a, eq, b := g["a"], g["="], g["b"]
	em := a.Size
	adv := func(it Item) float64 { return float64(set.Face(it.Face).Width([]rune(it.Text)[0])) * it.Size / 1000 }
	before, after := eq.X-(a.X+adv(a)), b.X-(eq.X+adv(eq))
	if before < 0.2*em || before > 0.35*em || after < 0.2*em || after > 0.35*em {
		t.Errorf("a %.2f em before =, b %.2f em after it: want a relation's space either side", before/em, after/em)
	}
}

// TestMathInlineBreaks: an inline formula wider than its line breaks
// after its outermost row's operators, as TeX breaks inline math, its
// glyphs at the text's size; scaled whole to fit, forty terms came out
// under 4 pt. Its TeX is extracted once, from its first piece. In a
// right-to-left paragraph its pieces still read left to right.
func TestMathInlineBreaks(t *testing.T) {
	var mml, tex strings.Builder
	mml.WriteString(`<math display="inline"><mrow>`)
	for i := 1; i <= 40; i++ {
		if i > 1 {
			mml.WriteString(`<mo>+</mo>`)
			tex.WriteString(" + ")
		}
		mml.WriteString(`<msub><mi>a</mi><mn>` + strconv.Itoa(i) + `</mn></msub>`)
		tex.WriteString("a_{" + strconv.Itoa(i) + "}")
	}
	mml.WriteString(`</mrow></math>`)
	formula := with(&stage.Node{Kind: stage.KindCodeSpan, Text: tex.String()}, "math", "inline", "mathml", mml.String())
	for _, words := range []string{"Sum ", "مرحبا بالعالم "} {
		d := lay(t, para(txt(words), formula, txt(" end.")))
		var begins []Item
		first := map[float64]float64{} // per baseline, the x of its first subscript
		var bases []float64
		for _, it := range d.Pages[0].Items {
			switch {
			case it.Kind == MathBegin:
				begins = append(begins, it)
			case it.Kind == Text && it.Text == "a":
				if len(bases) == 0 || bases[len(bases)-1] != it.Y {
					bases = append(bases, it.Y)
					first[it.Y] = it.X
				}
				if it.Size < 0.95*d.BodySize {
					t.Fatalf("%q: a drawn at %.1f pt, the text at %.1f", words, it.Size, d.BodySize)
				}
			}
		}
		if len(bases) < 2 {
			t.Fatalf("%q: the formula is on %d lines", words, len(bases))
		}
		if begins[0].Text != tex.String() {
			t.Errorf("%q: first piece extracts %q", words, begins[0].Text)
		}
		for _, b := range begins[1:] {
			if b.Text != "" {
				t.Errorf("%q: a later piece extracts %q", words, b.Text)
			}
		}
		// Each line's subscripts run left to right: a_1 is left of a_2.
		for _, it := range d.Pages[0].Items {
			if it.Kind == Text && it.Y > bases[0] && it.Y < bases[0]+0.5*it.Size && it.Text == "2" && it.X < first[bases[0]] {
				t.Errorf("%q: a_2's subscript at %.1f left of the line's first a at %.1f", words, it.X, first[bases[0]])
			}
		}
	}
}

// TestMathRTLText: right-to-left text in a formula (\text{שלום}) is drawn
// in display order, its Arabic joined, as the same words in a line of
// text; it was drawn in the order typed, reading backwards, Arabic
// unjoined.
func TestMathRTLText(t *testing.T) {
	g, _, _ := mathDoc(t, `<mrow><mtext>שלום</mtext><mo>+</mo><mtext>مرحبا</mtext></mrow>`)
	if _, ok := g["םולש"]; !ok {
		t.Errorf("Hebrew not in display order: %v", slices.Collect(maps.Keys(g)))
	}
	joined := false
	for s := range g {
		for _, r := range s {
			joined = joined || r >= 0xFE70 && r <= 0xFEFF
		}
		if strings.ContainsRune(s, 'م') || strings.HasPrefix(s, "ﻣ") {
			t.Errorf("Arabic drawn as typed: %q", s)
		}
	}
	if !joined {
		t.Errorf("Arabic not joined: %v", slices.Collect(maps.Keys(g)))
	}
}

// TestMathNegatedRelations: \not\equiv, \nleq and \nsubseteq are spaced
// as relations; they ran into their operands.
func TestMathNegatedRelations(t *testing.T) {
	set, _ := testFonts()
	for _, rel := range []string{"≢", "≰", "⊈"} {
		g, _, _ := mathDoc(t, `<mi>x</mi><mo>`+rel+`</mo><mi>y</mi>`)
		x, r := g["x"], g[rel]
		adv := float64(set.Face(x.Face).Width('x')) * x.Size / 1000
		if d := r.X - (x.X + adv); d < 0.2*x.Size {
			t.Errorf("%s spaced %.2f em from x", rel, d/x.Size)
		}
	}
}

// TestMathOperatorLspace: \pmod's operator, lspace 0, sits against the
// parenthesis before it, "(mod p)" as Chromium draws it, not "( mod p)".
func TestMathOperatorLspace(t *testing.T) {
	g, _, _ := mathDoc(t, `<mi>a</mi><mspace width="0.7em"></mspace><mo>(</mo><mo lspace="0">mod</mo><mi>p</mi><mo>)</mo>`)
	set, _ := testFonts()
	open, mod := g["("], g["mod"]
	adv := float64(set.Face(open.Face).Width('(')) * open.Size / 1000
	if d := mod.X - (open.X + adv); d > 0.05*open.Size {
		t.Errorf("mod %.2f em after (", d/open.Size)
	}
	if p := g["p"]; p.X-mod.X < 1.8*mod.Size {
		t.Errorf("p %.2f em after mod's start: want a space after mod", (p.X-mod.X)/mod.Size)
	}
}

// TestMathFunctionSpace: a function's name is a thin space (3mu, a sixth
// of an em) from the ordinary atom after it, whether or not the parser
// marked it with the function application operator it writes for
// Chromium (laid out as nothing, not a second space), and none from a
// delimiter, \left( as ( : "sin x", "sin(x)".
func TestMathFunctionSpace(t *testing.T) {
	set, _ := testFonts()
	gap := func(body, after string) float64 {
		t.Helper()
		g, _, _ := mathDoc(t, body)
		sin, next := g["sin"], g[after]
		if sin.Text == "" || next.Text == "" {
			t.Fatalf("%s: no sin or %s: %v", body, after, g)
		}
		adv := 0.0
		for _, r := range "sin" {
			adv += float64(set.Face(sin.Face).Width(r)) * sin.Size / 1000
		}
		return (next.X - (sin.X + adv)) / sin.Size
	}
	for _, c := range []struct {
		body, after string
		want        float64
	}{
		{`<mi>sin</mi><mi>x</mi>`, "x", 1.0 / 6},
		{`<mi>sin</mi><mo lspace="0" rspace="0.1667em">&#x2061;</mo><mi>x</mi>`, "x", 1.0 / 6},
		{`<mrow><munder><mi>sin</mi><mi>z</mi></munder></mrow><mo lspace="0" rspace="0.1667em">&#x2061;</mo><mi>h</mi>`, "h", 1.0 / 6},
		{`<mi>sin</mi><mo form="prefix" stretchy="false">(</mo><mi>x</mi><mo form="postfix" stretchy="false">)</mo>`, "(", 0},
		{`<mi>sin</mi><mrow><mo fence="true" form="prefix" stretchy="true">(</mo><mi>x</mi><mo fence="true" form="postfix" stretchy="true">)</mo></mrow>`, "(", 0},
	} {
		if d := gap(c.body, c.after); math.Abs(d-c.want) > 0.02 {
			t.Errorf("%s: %s %.3f em after sin, want %.3f", c.body, c.after, d, c.want)
		}
	}
	// Before the name, the parser's <mspace> alone: the converter's
	// lspace on the <mi> is not added to it (2\sin x), nor taken first
	// in a row or after a relation.
	for _, c := range []struct {
		body, before string
		want         float64
	}{
		{`<mn>2</mn><mspace width="0.1667em"/><mi lspace="0.11111em">sin</mi><mo lspace="0" rspace="0.1667em">&#x2061;</mo><mi>x</mi>`, "2", 1.0 / 6},
		{`<mi>y</mi><mo>=</mo><mi lspace="0.11111em">sin</mi><mo lspace="0" rspace="0.1667em">&#x2061;</mo><mi>x</mi>`, "=", 5.0 / 18},
	} {
		g, _, _ := mathDoc(t, c.body)
		b, sin := g[c.before], g["sin"]
		r, _ := utf8.DecodeRuneInString(c.before)
		adv := float64(set.Face(b.Face).Width(r)) * b.Size / 1000
		if d := (sin.X - (b.X + adv)) / sin.Size; math.Abs(d-c.want) > 0.02 {
			t.Errorf("%s: sin %.3f em after %s, want %.3f", c.body, d, c.before, c.want)
		}
	}
	g, _, begin := mathDoc(t, `<mi lspace="0.11111em">sin</mi><mi>x</mi>`)
	if d := g["sin"].X - begin.X; math.Abs(d) > 0.01 {
		t.Errorf("sin first in its formula %.2f pt from its start", d)
	}
	// A \mathcal letter, with its variation selector, is one letter, not
	// a name: nothing after it (\mathcal{F}x). It was spaced as sin.
	g, _, _ = mathDoc(t, `<mi>ℱ︀</mi><mi>x</mi>`)
	f, _ := set.MathAlphaRune('ℱ')
	cal, x := g[string(f)], g["x"]
	if d := (x.X - (cal.X + float64(set.Face(cal.Face).Width(f))*cal.Size/1000)) / x.Size; math.Abs(d) > 0.01 {
		t.Errorf("x %.3f em after ℱ, want none", d)
	}
}

// TestMathTag: a display formula's tag (the parser's mathtag for
// \tag{1}) ends at the column's right edge on the formula's baseline, the
// formula still centred, both inside the span whose text is the TeX;
// a formula too wide for the room beside its tag shrinks to keep an em
// from it. render-fpdf printed a formula with \tag as its source.
func TestMathTag(t *testing.T) {
	mml := `<math display="block"><mrow><mi>E</mi><mo>=</mo><mi>m</mi><msup><mi>c</mi><mn>2</mn></msup></mrow></math>`
	wide := `<math display="block"><mrow>` + strings.Repeat(`<mi>x</mi><mo>+</mo>`, 40) + `<mi>x</mi></mrow></math>`
	for _, tc := range []struct {
		name, mml string
		inPara    bool
	}{{"block", mml, false}, {"in a paragraph", mml, true}, {"wide", wide, false}} {
		t.Run(tc.name, func(t *testing.T) {
			tex := `E = mc^2 \tag{1}`
			var node *stage.Node
			if tc.inPara {
				node = para(txt("So "), with(&stage.Node{Kind: stage.KindCodeSpan, Text: tex}, "math", "display", "mathml", tc.mml, "mathtag", "(1)"), txt(" holds."))
			} else {
				node = with(&stage.Node{Kind: stage.KindCodeBlock, Text: tex}, "lang", "math", "math", "display", "mathml", tc.mml, "mathtag", "(1)")
			}
			d := lay(t, node)
			var begin, end, tag Item
			var first, last = math.Inf(1), math.Inf(-1) // the formula's glyphs
			for _, it := range d.Pages[0].Items {
				switch {
				case it.Kind == MathBegin:
					begin = it
				case it.Kind == MathEnd:
					end = it
				case it.Kind == Text && it.Text == "(1)":
					tag = it
				case it.Kind == Text && begin.Kind == MathBegin && end.Kind != MathEnd:
					first = math.Min(first, it.X)
					last = math.Max(last, it.X+textWidth(t, it))
				}
			}
			if begin.Kind != MathBegin || begin.Text != tex || tag.Text != "(1)" {
				t.Fatalf("no tagged formula laid out: %+v", d.Pages[0].Items)
			}
			tagW := textWidth(t, tag)
			col := d.Content
			if r := tag.X + tagW; math.Abs(r-col.X1) > 0.5 {
				t.Errorf("tag ends at %.1f, the column at %.1f", r, col.X1)
			}
			if tag.Y != begin.Y {
				t.Errorf("tag's baseline %.1f, the formula's %.1f", tag.Y, begin.Y)
			}
			if end.X+end.W < tag.X+tagW-0.5 || begin.X != first {
				t.Errorf("the TeX's span %.1f-%.1f does not hold the formula from %.1f and the tag to %.1f", begin.X, end.X+end.W, first, tag.X+tagW)
			}
			if tc.name == "wide" {
				if gap := tag.X - last; last > tag.X || gap > 40 {
					t.Errorf("the wide formula ends at %.1f, the tag begins at %.1f", last, tag.X)
				}
				return
			}
			if mid := (first + last) / 2; math.Abs(mid-(col.X0+col.X1)/2) > 1 {
				t.Errorf("formula centred at %.1f, the column at %.1f", mid, (col.X0+col.X1)/2)
			}
		})
	}
	// In a table's cell the tag follows the formula an em on, inside the
	// cell and the TeX's span, as Chromium puts it; it was dropped.
	t.Run("in a table cell", func(t *testing.T) {
		formula := with(&stage.Node{Kind: stage.KindCodeSpan, Text: `x \tag{1}`}, "math", "display",
			"mathml", `<math display="block"><mrow><mi>x</mi></mrow></math>`, "mathtag", "(1)")
		d := lay(t, n(stage.KindTable, n(stage.KindTableHead, n(stage.KindTableCell, txt("head")), n(stage.KindTableCell, txt("b"))),
			n(stage.KindTableRow, n(stage.KindTableCell, formula), n(stage.KindTableCell, txt("next")))))
		var x, tag, next, end Item
		for _, it := range d.Pages[0].Items {
			switch {
			case it.Kind == Text && it.Text == "x":
				x = it
			case it.Kind == Text && it.Text == "(1)":
				tag = it
			case it.Kind == Text && it.Text == "next":
				next = it
			case it.Kind == MathEnd:
				end = it
			}
		}
		if tag.Text == "" {
			t.Fatalf("no tag drawn: %+v", d.Pages[0].Items)
		}
		set, _ := testFonts()
		xw := float64(set.Face(x.Face).Width('x')) * x.Size / 1000
		if gap := tag.X - (x.X + xw); tag.Y != x.Y || math.Abs(gap-x.Size) > 0.5 {
			t.Errorf("tag at (%.1f, %.1f), %.1f pt after x at (%.1f, %.1f): want an em on, level", tag.X, tag.Y, gap, x.X, x.Y)
		}
		if tag.X+10 > next.X || end.X+end.W < tag.X {
			t.Errorf("tag at %.1f, the next cell's text at %.1f, the span to %.1f", tag.X, next.X, end.X+end.W)
		}
	})
}

// TestMathTagNoRoom: a tag too long to sit beside its formula with an em
// between them, on a narrow page, goes under the formula, flush right,
// and a tag wider than the column is scaled into it. The formula was
// kept to half the column and the tag drawn over it, or past the left
// margin.
func TestMathTagNoRoom(t *testing.T) {
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	a6 := stage.PageSize{Name: "A6", WidthPt: 297.64, HeightPt: 419.53}
	mml := `<math display="block"><mrow>` + strings.Repeat(`<msubsup><mi>x</mi><mi>i</mi><mn>2</mn></msubsup><mo>+</mo>`, 4) + `<mi>z</mi></mrow></math>`
	for _, tag := range []string{"(Pythagoras, general form)", strings.Repeat("W", 40)} {
		t.Run(tag[:4], func(t *testing.T) {
			node := with(&stage.Node{Kind: stage.KindCodeBlock, Text: `x \tag{...}`}, "lang", "math", "math", "display", "mathml", mml, "mathtag", tag)
			d, err := Layout(context.Background(), n(stage.KindDocument, node), Options{Page: a6, Fonts: set})
			if err != nil {
				t.Fatal(err)
			}
			var begin, end, tagIt Item
			var glyphs []Item
			for _, it := range d.Pages[0].Items {
				switch {
				case it.Kind == MathBegin:
					begin = it
				case it.Kind == MathEnd:
					end = it
				case it.Kind == Text && it.Text == tag:
					tagIt = it
				case it.Kind == Text && begin.Kind == MathBegin && end.Kind != MathEnd:
					glyphs = append(glyphs, it)
				}
			}
			if tagIt.Text == "" || len(glyphs) == 0 {
				t.Fatalf("no tagged formula laid out: %+v", d.Pages[0].Items)
			}
			col := d.Content
			if tagIt.X < col.X0-0.5 || tagIt.X+textWidth(t, tagIt) > col.X1+0.5 {
				t.Errorf("tag drawn from %.1f to %.1f, the column is %.1f-%.1f", tagIt.X, tagIt.X+textWidth(t, tagIt), col.X0, col.X1)
			}
			face := set.Face(tagIt.Face)
			tagTop := tagIt.Y - face.Ascent*tagIt.Size
			for _, g := range glyphs {
				gf := set.Face(g.Face)
				// Overlapping boxes: across and down.
				if g.X < tagIt.X+textWidth(t, tagIt) && tagIt.X < g.X+textWidth(t, g) && tagTop < g.Y+gf.Descent*g.Size {
					t.Errorf("formula's %q at (%.1f, %.1f) under the tag at (%.1f-%.1f, %.1f)", g.Text, g.X, g.Y, tagIt.X, tagIt.X+textWidth(t, tagIt), tagIt.Y)
				}
			}
			if end.X+end.W < tagIt.X+textWidth(t, tagIt)-0.5 || begin.X > glyphs[0].X {
				t.Errorf("the TeX's span %.1f-%.1f does not hold the formula and the tag", begin.X, end.X+end.W)
			}
		})
	}
}

// TestMathTagUnsupportedFree: a formula printed as source because its
// tag holds a character the text's face lacks costs nothing of the
// document's bound on formula items; it was charged for items it never
// drew, so that, a bound's worth of them on, every later formula printed
// as source too.
func TestMathTagUnsupportedFree(t *testing.T) {
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	const mml = `<math display="block"><mrow><mi>x</mi></mrow></math>`
	tagged := with(&stage.Node{Kind: stage.KindCodeBlock, Text: `x \tag{式1}`}, "lang", "math", "math", "display", "mathml", mml, "mathtag", "(式1)")
	plain := with(&stage.Node{Kind: stage.KindCodeBlock, Text: `x`}, "lang", "math", "math", "display", "mathml", mml)
	// A bound that holds the one formula, and not two.
	d, err := Layout(context.Background(), n(stage.KindDocument, tagged, plain), Options{Page: a4, Fonts: set, maxMathItems: 4})
	if err != nil {
		t.Fatal(err)
	}
	formulas := map[string]bool{}
	for _, it := range d.Pages[0].Items {
		if it.Kind == MathBegin {
			formulas[it.Text] = true
		}
	}
	if formulas[tagged.Text] {
		t.Fatal("the formula tagged with a character DejaVu lacks was laid out; the test needs one printed as source")
	}
	if !formulas[plain.Text] {
		t.Errorf("the untagged formula after it printed as source: %+v", d.Pages[0].Items)
	}
}

// TestMathRowTags: the tags of a display formula's rows (the parser's
// <mlabeledtr> labels) end at the column's right edge, each on its row's
// baseline, the rows still centred, all inside the span whose text is
// the TeX. render-fpdf printed a formula tagged per row as its source.
func TestMathRowTags(t *testing.T) {
	mml := `<math display="block"><mrow><mtable displaystyle="true">` +
		`<mlabeledtr><mtd><mtext>(1)</mtext></mtd><mtd columnalign="right"><mi>a</mi></mtd><mtd columnalign="left"><mo>=</mo><mfrac><mn>1</mn><mn>2</mn></mfrac></mtd></mlabeledtr>` +
		`<mtr><mtd columnalign="right"><mi>b</mi></mtd><mtd columnalign="left"><mo>=</mo><mi>c</mi></mtd></mtr>` +
		`<mlabeledtr><mtd><mtext>(2)</mtext></mtd><mtd columnalign="right"><mi>d</mi></mtd><mtd columnalign="left"><mo>=</mo><mi>e</mi></mtd></mlabeledtr>` +
		`</mtable></mrow></math>`
	tex := `\begin{align} a &= \frac12 \tag{1} \\ b &= c \\ d &= e \tag{2} \end{align}`
	d := lay(t, with(&stage.Node{Kind: stage.KindCodeBlock, Text: tex}, "lang", "math", "math", "display", "mathml", mml))
	var begin, end Item
	glyphs := map[string]Item{}
	first, last := math.Inf(1), math.Inf(-1)
	for _, it := range d.Pages[0].Items {
		switch {
		case it.Kind == MathBegin:
			begin = it
		case it.Kind == MathEnd:
			end = it
		case it.Kind == Text && begin.Kind == MathBegin && end.Kind != MathEnd:
			glyphs[it.Text] = it
			if it.Text[0] != '(' {
				first = math.Min(first, it.X)
				last = math.Max(last, it.X+textWidth(t, it))
			}
		}
	}
	if begin.Text != tex {
		t.Fatalf("no formula laid out: %+v", d.Pages[0].Items)
	}
	col := d.Content
	for tag, row := range map[string]string{"(1)": "a", "(2)": "d"} {
		g, r := glyphs[tag], glyphs[row]
		if g.Text == "" || r.Text == "" {
			t.Fatalf("no %s or %s drawn: %+v", tag, row, glyphs)
		}
		if e := g.X + textWidth(t, g); math.Abs(e-col.X1) > 0.5 {
			t.Errorf("%s ends at %.1f, the column at %.1f", tag, e, col.X1)
		}
		if math.Abs(g.Y-r.Y) > 0.01 {
			t.Errorf("%s's baseline %.1f, its row's %.1f", tag, g.Y, r.Y)
		}
		if end.X+end.W < g.X+textWidth(t, g)-0.5 {
			t.Errorf("the TeX's span ends at %.1f, before %s", end.X+end.W, tag)
		}
	}
	if mid := (first + last) / 2; math.Abs(mid-(col.X0+col.X1)/2) > 1 {
		t.Errorf("rows centred at %.1f, the column at %.1f", mid, (col.X0+col.X1)/2)
	}
	// A label anywhere but in the formula's rows, or inline, prints the
	// formula as source.
	inline := strings.Replace(mml, `display="block"`, `display="inline"`, 1)
	d = lay(t, para(with(&stage.Node{Kind: stage.KindCodeSpan, Text: tex}, "math", "inline", "mathml", inline)))
	for _, it := range d.Pages[0].Items {
		if it.Kind == MathBegin {
			t.Errorf("an inline formula with row labels was laid out")
		}
	}
}

// TestMathMultline: a table of width 100% (the parser's multline) spans
// the column, its first row flush left and its last flush right, an em
// in, those between centred; with a tag, it spans the room the tag
// leaves. It printed as its source.
func TestMathMultline(t *testing.T) {
	rows := `<mtr><mtd columnalign="left"><mi>a</mi></mtd></mtr><mtr><mtd columnalign="center"><mi>b</mi></mtd></mtr>`
	for _, tc := range []struct{ name, last string }{
		{"untagged", `<mtr><mtd columnalign="right"><mi>c</mi></mtd></mtr>`},
		{"tagged", `<mlabeledtr><mtd><mtext>(3)</mtext></mtd><mtd columnalign="right"><mi>c</mi></mtd></mlabeledtr>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mml := `<math display="block"><mrow><mtable displaystyle="true" width="100%">` + rows + tc.last + `</mtable></mrow></math>`
			d := lay(t, with(&stage.Node{Kind: stage.KindCodeBlock, Text: `\begin{multline} a \\ b \\ c \end{multline}`}, "lang", "math", "math", "display", "mathml", mml))
			g := map[string]Item{}
			for _, it := range d.Pages[0].Items {
				if it.Kind == Text {
					g[it.Text] = it
				}
			}
			a, b, c := g["a"], g["b"], g["c"]
			if a.Text == "" || b.Text == "" || c.Text == "" {
				t.Fatalf("rows not drawn: %+v", d.Pages[0].Items)
			}
			col := d.Content
			right := col.X1
			if tag, ok := g["(3)"]; ok {
				if math.Abs(tag.X+textWidth(t, tag)-col.X1) > 0.5 || math.Abs(tag.Y-c.Y) > 0.01 {
					t.Errorf("tag at (%.1f, %.1f), want it ending at %.1f on c's baseline %.1f", tag.X, tag.Y, col.X1, c.Y)
				}
				right = tag.X - a.Size
			} else if tc.name == "tagged" {
				t.Fatal("no tag drawn")
			}
			em := a.Size
			if x := a.X - col.X0; x < 0.5*em || x > 1.6*em {
				t.Errorf("first row %.1f pt from the left margin, want about an em", x)
			}
			if x := right - (c.X + textWidth(t, c)); x < 0.5*em || x > 1.6*em {
				t.Errorf("last row %.1f pt from its right end, want about an em", x)
			}
			if mid := b.X + textWidth(t, b)/2; math.Abs(mid-(col.X0+right)/2) > 2 {
				t.Errorf("middle row centred at %.1f, want %.1f", mid, (col.X0+right)/2)
			}
		})
	}
}
