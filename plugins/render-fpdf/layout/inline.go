package layout

import (
	"math"
	"strconv"
	"strings"

	"github.com/mdpress/mdpress/sdk/stage"
)

// maxInlineDepth bounds recursion into nested inline nodes; deeper content
// is kept as plain text in the style reached so far.
const maxInlineDepth = 32

// inliner turns inline nodes into atoms. Raw HTML tags among the nodes open
// and close styles across siblings, so it carries that state along.
type inliner struct {
	e     *engine
	atoms []atom
	html  htmlState
	depth int
}

// inlines returns the atoms of inline nodes in base style st.
func (e *engine) inlines(ns []*stage.Node, st *style) []atom {
	in := &inliner{e: e}
	in.nodes(ns, st)
	return e.shape(in.atoms)
}

func (in *inliner) nodes(ns []*stage.Node, st *style) {
	for _, n := range ns {
		if n != nil {
			in.node(n, st)
		}
	}
}

func (in *inliner) node(n *stage.Node, st *style) {
	if in.depth >= maxInlineDepth {
		in.text(plainText(n), st)
		return
	}
	in.depth++
	defer func() { in.depth-- }()
	e := in.e
	switch n.Kind {
	case stage.KindText:
		in.text(n.Text, st)
	case stage.KindSoftBreak:
		in.text(" ", st)
	case stage.KindHardBreak:
		in.atoms = append(in.atoms, atom{kind: aBreak, st: st})
	case stage.KindEmphasis:
		in.nodes(n.Children, st.with(func(s *style) { s.italic = true }))
	case stage.KindStrong:
		in.nodes(n.Children, st.with(func(s *style) { s.bold = true }))
	case stage.KindStrikethrough:
		in.nodes(n.Children, st.with(e.strikeStyle))
	case stage.KindCodeSpan:
		if in.html.skip == "" {
			if a, ok := e.formula(n, in.html.apply(e, st)); ok {
				in.atoms = append(in.atoms, a)
				return
			}
		}
		in.text(n.Text, e.codeStyle(st))
		in.nodes(n.Children, e.codeStyle(st))
	case stage.KindLink:
		in.nodes(n.Children, e.linkStyle(st, n.Attr("href")))
	case stage.KindImage:
		in.image(n.Attr("src"), imageAlt(n), "", "", st)
	case stage.KindRawHTML:
		in.rawHTML(n.Text, st)
	case stage.KindFootnoteRef:
		in.footnoteRef(n, st)
	case kindBacklink:
		in.backlink(n, st)
	default:
		// A block node inside inline content: keep its text.
		in.text(plainText(n), st)
	}
}

// text appends flowing text, unless raw HTML has opened an element whose
// content is not shown (<script>, <style>).
func (in *inliner) text(s string, st *style) {
	if in.html.skip != "" || s == "" {
		return
	}
	in.atoms = in.e.textAtoms(in.atoms, s, in.html.apply(in.e, st))
}

func (e *engine) codeStyle(st *style) *style {
	return st.with(func(s *style) {
		s.family = e.th.mono
		s.size = st.size * e.th.codeSize / e.th.size
		s.code = true
		s.color = e.th.codeText
		s.underline = false
	})
}

// strikeStyle strikes s through, in the muted colour when the theme mutes
// struck text; the line is drawn in the text's colour.
func (e *engine) strikeStyle(s *style) {
	s.strike = true
	if e.th.strikeMuted {
		s.color = e.th.muted
	}
}

func (e *engine) linkStyle(st *style, href string) *style {
	return st.with(func(s *style) {
		s.link = strings.TrimSpace(href)
		s.color = e.th.link
		// A plain link keeps an underline it is inside (<u><a>), as a
		// decoration reaches every box in the element.
		s.underline = s.underline || !e.th.linkPlain
	})
}

func (in *inliner) footnoteRef(n *stage.Node, st *style) {
	index := n.Attr("index")
	if index == "" {
		index = "*"
	}
	sup := st.with(func(s *style) {
		s.size = st.size * 0.7
		s.rise = st.size * 0.35
		s.color = in.e.th.link
		s.link = "#" + footnoteAnchor(index)
		s.code, s.underline, s.strike = false, false, false
	})
	in.atoms = append(in.atoms, atom{kind: aAnchor, text: in.e.refAnchor(n, index), st: st})
	in.atoms = in.e.textAtoms(in.atoms, index, sup)
}

// refAnchor names the place of footnote reference n, the k-th to its
// note, k counted in the order references are first laid out: a block is
// also measured before it is placed (a heading keeps with what follows),
// and a second look at the same node must not count it again.
func (e *engine) refAnchor(n *stage.Node, index string) string {
	if name, ok := e.refAnchors[n]; ok {
		return name
	}
	if e.refAnchors == nil {
		e.refAnchors, e.fnRefs = map[*stage.Node]string{}, map[string]int{}
	}
	name := footnoteRefAnchor(index, strconv.Itoa(e.fnRefs[index]))
	e.fnRefs[index]++
	e.refAnchors[n] = name
	return name
}

// backlink draws a footnote's link back to one of its references, the
// "↩" goldmark ends a note with, one per reference, after a no-break
// space, in the link colour and not underlined as the themes print it.
func (in *inliner) backlink(n *stage.Node, st *style) {
	in.text("\u00a0", st)
	in.atoms = in.e.textAtoms(in.atoms, "↩", st.with(func(s *style) {
		s.color = in.e.th.link
		s.link = "#" + footnoteRefAnchor(n.Attr("index"), n.Attr("ref"))
		s.code, s.underline, s.strike = false, false, false
	}))
}

func imageAlt(n *stage.Node) string {
	if alt := n.Attr("alt"); alt != "" {
		return alt
	}
	return plainText(n)
}

// image appends an image from a data: URI, sized to the page: small ones
// sit in the line, larger ones become blocks of their own. Anything else
// (remote, file:, broken data) is shown as its alt text; nothing is ever
// fetched or read from disk. width is an <img>'s width attribute, or "";
// height its height attribute when it has no width attribute, or "".
func (in *inliner) image(src, alt, width, height string, st *style) {
	e := in.e
	st = in.html.apply(e, st)
	ref, ok := e.loadImage(src)
	if !ok {
		if strings.TrimSpace(alt) != "" {
			in.text(alt, st.with(func(s *style) {
				s.italic = true
				if s.link == "" {
					s.color = e.th.muted
				}
			}))
		}
		return
	}
	w, h := float64(ref.w)*0.75, float64(ref.h)*0.75 // CSS pixels at 96 dpi
	if v, percent, ok := htmlLength(width); ok {
		// The width attribute, as the Chromium backend's themes honour it
		// (img { height: auto }): the height follows the image's aspect,
		// whatever the height attribute says.
		cw := v * 0.75
		if percent {
			cw = v / 100 * (e.x1 - e.x0)
		}
		if cw <= 0 {
			return // a browser draws nothing, and shows no alt text
		}
		w, h = cw, cw*h/w
	} else if v, percent, ok := htmlLength(height); ok && !percent {
		// A lone height attribute, as the themes honour it: the width
		// follows the aspect, and max-width: 100% narrows a too wide
		// image to the column without changing its height, as Chromium
		// does. A percentage of a line's auto height is auto.
		ch := v * 0.75
		if ch <= 0 {
			return
		}
		w, h = math.Min(ch*w/h, e.x1-e.x0), ch
	}
	// Leave room above a page-sized image for the heading that often
	// introduces it.
	maxW, maxH := e.x1-e.x0, (e.bottom-e.top)*0.85
	if f := math.Min(maxW/w, maxH/h); f < 1 {
		w, h = w*f, h*f
	}
	kind := aBlockImage
	if h <= st.size*e.th.lineHeight*1.2 {
		kind = aImage
	}
	in.atoms = append(in.atoms, atom{kind: kind, img: ref.index, w: w, imgH: h, st: st})
}

// htmlLength parses an HTML length attribute (width="120", "120px",
// "50%") as browsers do: leading digits with an optional fraction, in
// pixels, or a percentage when a '%' follows; the rest is ignored.
func htmlLength(s string) (v float64, percent, ok bool) {
	s = strings.TrimLeft(s, " \t\n\f\r")
	digits := func(i int) int {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	i := digits(0)
	if i < len(s) && s[i] == '.' {
		i = digits(i + 1)
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, false, false
	}
	return v, strings.HasPrefix(s[i:], "%"), true
}
