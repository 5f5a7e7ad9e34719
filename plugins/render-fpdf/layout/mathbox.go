package layout

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
)

// A formula is laid out as TeX lays out its boxes, with TeX's rules
// simplified: glyphs in DejaVu Serif (italic for one-letter identifiers,
// as MathML draws them), scripts at 70% and 50% of the size, fractions
// and radicals drawn with rules, large operators larger in display style.
// Ink extents come from the glyph outlines (fonts.Face.Extent), so
// scripts and bars sit where the letters are, not where the line's ascent
// is. Each element is laid out once, in one pass; stretched fences are
// laid out twice.

// mbox is a laid-out piece of a formula: w wide, reaching asc above its
// baseline and desc below. It draws its glyph run, its rules and its
// children, each placed from its own origin, the left end of its baseline,
// with y growing down.
type mbox struct {
	w, asc, desc float64
	text         string
	face         fonts.ID
	size         float64
	rules        []mrule
	kids         []mplaced
	hidden       bool // mphantom: takes its room, draws nothing
	// labels are the labels of a table's rows, drawn not in the
	// formula but at the margin, each on its row's baseline.
	labels []mlabel
}

// mlabel is a table row's label and the row's baseline in the table.
type mlabel struct {
	y    float64
	text string
}

type mplaced struct {
	x, y float64
	b    *mbox
}

type mrule struct{ x1, y1, x2, y2, lw float64 }

// place puts b into the box at (x, y) and grows the box to hold it.
func (m *mbox) place(b *mbox, x, y float64) {
	m.kids = append(m.kids, mplaced{x, y, b})
	m.asc = math.Max(m.asc, b.asc-y)
	m.desc = math.Max(m.desc, b.desc+y)
	m.w = math.Max(m.w, x+b.w)
}

// mctx is the style a part of a formula is laid out in.
type mctx struct {
	size    float64 // font size at this level
	base    float64 // the formula's size
	level   int     // script level: 0, 1 for scripts, 2 for scripts of scripts
	display bool
	// width is the line a display formula's table of width 100% spans,
	// 0 where it takes its natural width.
	width float64
}

// script is the style of a script or limit of c.
func (c mctx) script() mctx {
	c.width = 0
	c.level++
	c.display = false
	c.size = c.base * 0.7
	if c.level >= 2 {
		c.size = c.base * 0.5
	}
	return c
}

// fraction is the style of a fraction's parts in c.
func (c mctx) fraction() mctx {
	if c.display {
		c.display = false
		return c
	}
	return c.script()
}

// mathLayout lays out one formula.
type mathLayout struct {
	e    *engine
	axis float64 // the math axis (the minus sign's middle), in ems
}

func (e *engine) newMathLayout() *mathLayout {
	m := &mathLayout{e: e, axis: 0.25}
	if a, d, ok := e.fonts.Face(fonts.Of(fonts.Serif, fonts.Regular)).Extent('−'); ok {
		m.axis = (a - d) / 2
	}
	return m
}

// rule is the thickness of fraction bars and radicals at size.
func rule(size float64) float64 { return math.Max(0.35, size*0.055) }

// lay lays out n in style c.
func (m *mathLayout) lay(n *mnode, c mctx) (*mbox, error) {
	// Colour would be lost: \textcolor puts it on any element, not only
	// on the <mstyle> of \color.
	if n.attr("mathcolor") != "" || n.attr("mathbackground") != "" {
		return nil, errMathUnsupported
	}
	switch n.tag {
	case "math", "mrow", "mpadded", "mtd":
		return m.row(n.kids, c)
	case "mstyle":
		switch n.attr("displaystyle") {
		case "true":
			c.display = true
		case "false":
			c.display = false
		}
		return m.row(n.kids, c)
	case "mphantom":
		b, err := m.row(n.kids, c)
		if b != nil {
			b.hidden = true
		}
		return b, err
	case "mi", "mn", "mo", "mtext":
		return m.token(n, c)
	case "mspace":
		w, ok := mathLength(n.attr("width"), c.size)
		if !ok {
			return nil, errMathUnsupported
		}
		return &mbox{w: w}, nil
	case "msup", "msub", "msubsup":
		return m.scripts(n, c)
	case "munder", "mover", "munderover":
		return m.limits(n, c)
	case "mfrac":
		return m.frac(n, c)
	case "msqrt":
		body, err := m.row(n.kids, c)
		if err != nil {
			return nil, err
		}
		return m.radical(body, nil, c), nil
	case "mroot":
		body, err := m.lay(n.kids[0], c)
		if err != nil {
			return nil, err
		}
		ic := c.script()
		ic = ic.script()
		index, err := m.lay(n.kids[1], ic)
		if err != nil {
			return nil, err
		}
		return m.radical(body, index, c), nil
	case "mtable":
		return m.table(n, c)
	case "menclose":
		return m.enclose(n, c)
	}
	return nil, errMathUnsupported
}

// mathLength reads a MathML length in em, ex or pt.
func mathLength(s string, size float64) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, true
	}
	for unit, f := range map[string]float64{"em": size, "ex": size * 0.45, "pt": 1} {
		if v, err := strconv.ParseFloat(strings.TrimSuffix(s, unit), 64); strings.HasSuffix(s, unit) && err == nil &&
			!math.IsNaN(v) && math.Abs(v) <= 10*size/f {
			return v * f, true
		}
	}
	return 0, false
}

// token lays out the characters of mi, mn, mo or mtext.
func (m *mathLayout) token(n *mnode, c mctx) (*mbox, error) {
	text := n.text
	if n.tag != "mtext" {
		text = strings.TrimSpace(text)
	}
	r, size := utf8.DecodeRuneInString(text)
	italic := n.tag == "mi" && size == len(text) && unicode.IsLetter(r)
	bold := false
	switch n.attr("mathvariant") {
	case "":
	case "normal":
		italic = false
	case "italic":
		italic = true
	case "bold":
		bold, italic = true, false
	case "bold-italic":
		bold, italic = true, true
	default:
		return nil, errMathUnsupported // script, fraktur, ...: a face DejaVu lacks
	}
	sz := c.size
	if l, err := strconv.Atoi(n.attr("scriptlevel")); err == nil && n.tag == "mo" && l < 0 && l >= -4 {
		// \big( to \Bigg(: a fence a quarter larger a step.
		sz *= 1 + 0.25*float64(-l)
	}
	if n.tag == "mo" && n.attr("largeop") == "true" && c.display {
		// TeX's display operators: sums about 1.4 times the text, integrals
		// taller still.
		sz *= 1.4
		if strings.ContainsAny(text, "∫∬∭∮∯∰") {
			sz *= 1.2
		}
	}
	if hasRTL(text) {
		text = m.e.visualText(text)
	}
	b, err := m.glyphs(text, fonts.Of(fonts.Serif, fonts.StyleOf(bold, italic)), sz)
	if err != nil {
		return nil, err
	}
	// The converter's lspace on a function's name (sin, lim) is not read:
	// the parser writes the space TeX puts before one as an <mspace>,
	// where TeX puts it (not first in a row, nor after an operator), as
	// Chromium, which ignores lspace on <mi>, draws it.
	if l, ok := mathLength(n.attr("lspace"), c.size); ok && l > 0 && c.level == 0 && n.tag != "mi" {
		return shift(b, l), nil
	}
	return b, nil
}

// shift returns b with room w before it.
func shift(b *mbox, w float64) *mbox {
	out := &mbox{}
	out.place(b, w, 0)
	return out
}

// glyphs lays out text in face want at size, each character in the face
// text.go's resolve picks; a character no font has fails the formula.
func (m *mathLayout) glyphs(text string, want fonts.ID, size float64) (*mbox, error) {
	out := &mbox{}
	var run []byte
	face := fonts.ID(-1)
	x, runX := 0.0, 0.0
	inked := false
	flush := func() {
		if len(run) > 0 {
			out.kids = append(out.kids, mplaced{runX, 0, &mbox{text: string(run), face: face, size: size}})
		}
		run, runX = run[:0], x
	}
	for _, r := range text {
		if dropped(r) {
			continue
		}
		w := want
		if p, ok := m.e.fonts.MathAlphaRune(r); ok {
			// Script, fraktur and double-struck letters, ℝ and ℒ too, so
			// that \mathbb{R} and \mathbb{E} are of one design.
			r, w = p, fonts.MathAlpha
		} else if r > 0xFFFF {
			if r, w, ok = mathAlnum(r); !ok {
				return nil, errMathUnsupported
			}
		}
		got, id := m.e.resolve(r, w)
		if got == replacement {
			return nil, errMathUnsupported
		}
		if id != face {
			flush()
			face = id
		}
		f := m.e.fonts.Face(id)
		// The ink's extent, which may lie wholly above the baseline (an
		// accent: desc negative) or below it.
		if a, d, _ := f.Extent(r); inked {
			out.asc, out.desc = math.Max(out.asc, a*size), math.Max(out.desc, d*size)
		} else if a != 0 || d != 0 {
			out.asc, out.desc, inked = a*size, d*size, true
		}
		run = utf8.AppendRune(run, r)
		x += float64(f.Width(r)) * size / 1000
	}
	flush()
	out.w = x
	if len(out.kids) == 1 { // the common case: one box, not two
		k := out.kids[0].b
		k.w, k.asc, k.desc = out.w, out.asc, out.desc
		return k, nil
	}
	return out, nil
}

// opClass is how an operator spaces itself from its neighbours.
type opClass uint8

const (
	opOrd opClass = iota
	opBin
	opRel
	opPunct
	opOpen
	opLargeOp
	opFunc // a function's name (sin, log): a thin space before its argument
)

func opClassOf(n *mnode) opClass {
	switch n.tag {
	case "mi":
		// Not counting variation selectors: \mathcal{F} is ℱ U+FE00, one
		// letter, not a function's name.
		if utf8.RuneCountInString(strings.TrimSpace(n.text))-variationSelectors(n.text) > 1 {
			return opFunc
		}
	case "mo":
		if n.attr("largeop") == "true" {
			return opLargeOp
		}
		t := strings.TrimSpace(n.text)
		if r, _ := utf8.DecodeRuneInString(t); unicode.IsLetter(r) && utf8.RuneCountInString(t) > 1 {
			// An operator named by a word (mod): MathML's default
			// spacing for operators it does not list, thick.
			return opRel
		}
		switch t {
		case "+", "−", "-", "±", "∓", "×", "÷", "·", "⋅", "∗", "∘", "∙", "∪", "∩", "∧", "∨", "⊕", "⊗", "∖", "⋆":
			return opBin
		case "=", "<", ">", "≤", "≥", "≠", "≈", "≡", "∼", "≃", "≅", "→", "←", "↔", "⇒", "⇐", "⇔", "↦", "∈", "∉",
			"∋", "∣", "∤", "⊂", "⊃", "⊆", "⊇", "∝", "≪", "≫", "⟹", "⟸", "⟺", "≔", ":=", "⊥", "∥", "≺", "≻", "⟶", "⟵", "⊢", "⊨", ":",
			// Negated and less common relations (\not\equiv, \nleq,
			// \nsubseteq, \preceq, \hookrightarrow), spaced as TeX and
			// Chromium space them.
			"≢", "≰", "≱", "≮", "≯", "⊄", "⊅", "⊈", "⊉", "∌", "≁", "≄", "≇", "≉", "∦", "⇏", "↛", "⊬", "⊭",
			"≲", "≳", "≼", "≽", "⪯", "⪰", "⩽", "⩾", "⊏", "⊐", "⊑", "⊒", "⊲", "⊳", "⊴", "⊵", "≐", "≍", "≜",
			"↪", "↩", "⇝", "⟼", "↑", "↓", "⇑", "⇓", "↗", "↘", "↙", "↖", "⊣", "∽", "⇀", "↼", "⇌", "⇄":
			return opRel
		case ",", ";":
			return opPunct
		case "(", "[", "{", "⟨", "⌊", "⌈":
			return opOpen
		}
	case "msub", "msup", "msubsup", "munder", "mover", "munderover":
		if c := opClassOf(n.kids[0]); c == opLargeOp || c == opFunc {
			return c
		}
	case "mrow":
		if len(n.kids) == 1 {
			return opClassOf(n.kids[0])
		}
	}
	return opOrd
}

// funcApply reports whether n is the function application operator
// (U+2061), which the parser writes after a function's name for
// Chromium, which spaces it by its rspace.
func funcApply(n *mnode) bool {
	return n.tag == "mo" && strings.TrimSpace(n.text) == "\u2061"
}

// leadsWithMo reports whether n is an operator or begins with one.
func leadsWithMo(n *mnode) bool {
	switch n.tag {
	case "mo":
		return true
	case "mrow", "mstyle", "mpadded", "msub", "msup", "msubsup", "munder", "mover", "munderover":
		return len(n.kids) > 0 && leadsWithMo(n.kids[0])
	}
	return false
}

// stretchy reports whether n is a fence that grows with what it encloses.
func stretchy(n *mnode) bool {
	if n.tag != "mo" || n.attr("stretchy") == "false" {
		return false
	}
	if n.attr("fence") != "true" && n.attr("stretchy") != "true" && n.attr("strechy") != "true" {
		return false
	}
	switch strings.TrimSpace(n.text) {
	case "(", ")", "[", "]", "{", "}", "|", "‖", "⟨", "⟩", "⌊", "⌋", "⌈", "⌉":
		return true
	}
	return false
}

// row lays out elements side by side, spaced as TeX spaces atoms (in
// script styles only punctuation keeps its space), fences stretched to
// what they enclose.
func (m *mathLayout) row(kids []*mnode, c mctx) (*mbox, error) {
	boxes := make([]*mbox, len(kids))
	var asc, desc float64
	fences := false
	for i, k := range kids {
		b, err := m.lay(k, c)
		if err != nil {
			return nil, err
		}
		boxes[i] = b
		if stretchy(k) {
			fences = true
			continue
		}
		asc, desc = math.Max(asc, b.asc), math.Max(desc, b.desc)
	}
	if fences {
		for i, k := range kids {
			if stretchy(k) {
				boxes[i] = m.stretch(k, boxes[i], asc, desc, c)
			}
		}
	}
	out := &mbox{}
	x := 0.0
	prev := opOpen
	em := c.size / 18
	for i, b := range boxes {
		if funcApply(kids[i]) {
			// The parser's mark of where a function's space goes, which
			// the rule below puts there: it takes no space of its own.
			out.place(b, x, 0)
			x += b.w
			continue
		}
		cls := rowClass(kids, i, prev)
		space := 0.0
		if c.level == 0 {
			switch cls {
			case opBin:
				space = 4 * em
			case opRel:
				space = 5 * em
			}
		}
		// After a function's name, none before an operator or what an
		// operator begins (\sin\left(x\right), as \sin(x)), as Chromium
		// lays out the MathML the parser writes.
		if i > 0 && (prev == opLargeOp || prev == opFunc && !leadsWithMo(kids[i])) && (cls == opOrd || cls == opFunc) {
			x += 3 * em
		}
		// Nothing to space from before the first; none either where the
		// converter says so (\pmod's "(mod": lspace 0).
		if i > 0 && !(kids[i].tag == "mo" && isZero(kids[i].attr("lspace"))) {
			x += space
		}
		out.place(b, x, 0)
		x += b.w
		if i < len(boxes)-1 {
			x += space
		}
		if cls == opPunct {
			x += 3 * em
		}
		prev = cls
	}
	out.w = math.Max(out.w, x)
	return out, nil
}

// isZero reports whether the MathML length s is zero.
func isZero(s string) bool {
	if v, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		return v == 0 // unitless, as the converter writes it
	}
	v, ok := mathLength(s, 1)
	return strings.TrimSpace(s) != "" && ok && v == 0
}

// rowClass is the class of kids[i] in its row, after prev's: a binary
// operator first in a row, after another operator or last is unary
// (a leading minus).
func rowClass(kids []*mnode, i int, prev opClass) opClass {
	if i == 0 {
		prev = opOpen
	}
	cls := opClassOf(kids[i])
	if cls == opBin && (prev == opBin || prev == opRel || prev == opPunct || prev == opOpen || prev == opLargeOp) {
		return opOrd
	}
	if cls == opBin && i == len(kids)-1 {
		return opOrd
	}
	return cls
}

// stretch lays out fence n again, large enough to span asc and desc
// about the axis, centred on it.
func (m *mathLayout) stretch(n *mnode, b *mbox, asc, desc float64, c mctx) *mbox {
	axis := m.axis * c.size
	half := math.Max(asc-axis, desc+axis) * 1.08
	h0 := b.asc + b.desc
	if h0 <= 0 || 2*half <= h0*1.1 {
		return b
	}
	f := 2 * half / h0
	if f > maxFenceScale {
		if s := m.strokedFence(strings.TrimSpace(n.text), -axis-half, -axis+half, c.size); s != nil {
			return s
		}
		f = maxFenceScale
	}
	g, err := m.glyphs(strings.TrimSpace(n.text), fonts.Of(fonts.Serif, fonts.Regular), c.size*f)
	if err != nil {
		return b
	}
	out := &mbox{}
	out.place(g, 0, (g.asc-g.desc)/2-axis)
	return out
}

// maxFenceScale is how far a fence's glyph is scaled: it grows as wide as
// it grows tall, so past this a fence is drawn with strokes instead.
const maxFenceScale = 6

// fenceShapes are the fences drawn with strokes, as polylines in a box
// one unit wide from top (y 0) to bottom (y 1), opening to the right;
// the closing fence is its opening one mirrored. A parenthesis is an
// elliptical arc, drawn as a polyline.
var fenceShapes = func() map[string][][][2]float64 {
	var arc [][2]float64
	for i := 0; i <= 16; i++ {
		phi := math.Pi * (float64(i)/16 - 0.5)
		arc = append(arc, [2]float64{0.9 - 0.65*math.Cos(phi), 0.5 + 0.5*math.Sin(phi)})
	}
	bracket := [][][2]float64{{{0.85, 0}, {0.3, 0}, {0.3, 1}, {0.85, 1}}}
	floor := [][][2]float64{{{0.3, 0}, {0.3, 1}, {0.85, 1}}}
	ceil := [][][2]float64{{{0.85, 0}, {0.3, 0}, {0.3, 1}}}
	brace := [][][2]float64{{{0.9, 0}, {0.5, 0.03}, {0.5, 0.47}, {0.15, 0.5}, {0.5, 0.53}, {0.5, 0.97}, {0.9, 1}}}
	angle := [][][2]float64{{{0.8, 0}, {0.2, 0.5}, {0.8, 1}}}
	bar := [][][2]float64{{{0.5, 0}, {0.5, 1}}}
	dbar := [][][2]float64{{{0.3, 0}, {0.3, 1}}, {{0.7, 0}, {0.7, 1}}}
	return map[string][][][2]float64{
		"(": {arc}, "[": bracket, "{": brace, "⟨": angle, "⌊": floor, "⌈": ceil, "|": bar, "‖": dbar,
		")": mirror(arc), "]": mirror(bracket...), "}": mirror(brace...), "⟩": mirror(angle...),
		"⌋": mirror(floor...), "⌉": mirror(ceil...),
	}
}()

func mirror(lines ...[][2]float64) [][][2]float64 {
	out := make([][][2]float64, len(lines))
	for i, l := range lines {
		for _, p := range l {
			out[i] = append(out[i], [2]float64{1 - p[0], p[1]})
		}
	}
	return out
}

// strokedFence draws fence text from top to bottom (y down from the
// baseline) with lines, or returns nil for a fence it has no shape for.
func (m *mathLayout) strokedFence(text string, top, bottom, size float64) *mbox {
	shape, ok := fenceShapes[text]
	if !ok {
		return nil
	}
	w, h, t := 0.5*size, bottom-top, 1.5*rule(size)
	out := &mbox{w: w, asc: -top, desc: bottom}
	for _, l := range shape {
		for i := 1; i < len(l); i++ {
			out.rules = append(out.rules, mrule{l[i-1][0] * w, top + l[i-1][1]*h, l[i][0] * w, top + l[i][1]*h, t})
		}
	}
	return out
}

// variationSelectors counts the variation selectors in s.
func variationSelectors(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0xFE00 && r <= 0xFE0F {
			n++
		}
	}
	return n
}
