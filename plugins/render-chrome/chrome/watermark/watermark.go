// Package watermark stamps a text watermark on every page of a PDF that
// Chromium printed, where the document's own CSS cannot reach it. With
// the same reader, Describe corrects what Chromium wrote for the PDF's
// readers: its document information and its bookmarks' titles (meta.go).
//
// The stamp rewrites the file: one header, the printed objects that stay
// as they are, copied byte for byte, then a font (standard
// Helvetica-Bold, not embedded), a graphics state for the opacity, the
// mark's content streams and the new version of every page object, and
// one cross-reference table and trailer. The unmarked page objects are
// not in the file, nor is any earlier version of it, so no cut of the
// file, and no reader rebuilding a damaged one, brings the print back
// without its mark. Each page's content becomes [q, its old content, Q +
// the mark], so the mark is drawn last, above everything, in the page's
// default coordinates, whatever the old content left in the graphics
// state.
//
// It reads PDFs with classic cross-reference tables, which is what
// Chromium (Skia) writes: PDF 1.4, no object or cross-reference streams.
// Resources may be inline or indirect, on the page or inherited from the
// page tree. Anything else is refused with an error rather than passed
// through unmarked.
package watermark

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Mark is the watermark to stamp.
type Mark struct {
	// Text is drawn in WinAnsiEncoding; see encode.
	Text string
	// Margins of the text area (top, right, bottom, left, in points): the
	// mark is centred on the page box less these and sized to it, as the
	// style stage's CSS mark was. Zero margins use the whole page.
	Margins [4]float64
}

// The mark's look: what the style stage's CSS drew, rgba(120, 120, 120,
// 0.28), bold sans spaced 0.04 em, rotated 45 degrees anticlockwise, over
// a white halo of the same opacity. The grey alone vanishes on a page of
// its own colour (one CSS background); the halo alone on a white one,
// where it leaves the mark as it was. No background hides both.
const (
	grey    = 120.0 / 255
	opacity = 0.28
	spacing = 0.04 // em
	angle   = math.Pi / 4
	halo    = 0.12 // em, the outline's width: half of it outside the glyphs
)

// Stamp returns pdf with m drawn on every page. A mark with nothing to
// draw returns pdf as it is.
func Stamp(pdf []byte, m Mark) ([]byte, error) {
	text := encode(m.Text)
	if len(text) == 0 {
		return pdf, nil
	}
	f, err := readFile(pdf)
	if err != nil {
		return nil, fmt.Errorf("read pdf: %w", err)
	}
	pages, err := f.pages()
	if err != nil {
		return nil, fmt.Errorf("read pages: %w", err)
	}
	if len(pages) == 0 {
		return nil, errors.New("read pages: the document has none")
	}
	size, ok := f.trailer.get("Size")
	if !ok || size.kind != kNumber || size.num < 1 || size.num > maxObjects {
		return nil, fmt.Errorf("read pdf: %w: the trailer's /Size is missing or out of range", errSyntax)
	}
	// The new objects are numbered from /Size up: one the file already
	// has would be replaced, a page's mark or the page itself lost.
	for n := range f.xref {
		if n >= int(size.num) {
			return nil, fmt.Errorf("read pdf: %w: object %d is past the trailer's /Size", errSyntax, n)
		}
	}
	name, err := f.freeName(pages)
	if err != nil {
		return nil, err
	}
	v, err := version(pdf)
	if err != nil {
		return nil, fmt.Errorf("read pdf: %w", err)
	}
	// The output is the input, less what it no longer needs, plus the
	// mark. Each page gets its own copy of resources it shares through
	// the page tree or an indirect font dictionary: bounded, so that many
	// pages sharing much cannot multiply the file. Chromium's pages each
	// have their own resources, which this leaves room for many times
	// over. The bound also refuses a /Size whose table would outgrow it.
	limit := 2*len(pdf) + 1<<16 + len(pages)<<10
	tooLarge := fmt.Errorf("%w: the pages share resources, or the object numbers leave gaps, that would grow the file past its size", errUnsupported)
	next := int(size.num)
	if xrefLen(next+3+len(pages)) > limit {
		return nil, tooLarge
	}
	spans, err := f.spans()
	if err != nil {
		return nil, fmt.Errorf("read pdf: %w", err)
	}
	replaced := make(map[int]bool, len(pages))
	for _, pg := range pages {
		replaced[pg.num] = true
	}

	w := newRewrite(v, pdf, len(pages))
	for _, s := range spans {
		if !replaced[s.num] {
			w.copy(pdf, s, f.xref[s.num].gen)
		}
	}
	// The new objects come after the copied ones, and each page after
	// the objects it draws the mark with: any prefix of the file that
	// holds a page holds its mark, and a reader that rebuilds a damaged
	// file by scanning, keeping the last object of a number, finds the
	// marked pages.
	alloc := func() int { next++; return next - 1 }
	font, gs, open := alloc(), alloc(), alloc()
	w.object(font, 0, []byte("<</Type /Font /Subtype /Type1 /BaseFont /"+fontName+" /Encoding /WinAnsiEncoding>>"))
	w.object(gs, 0, []byte("<</Type /ExtGState /ca "+num(opacity)+" /CA "+num(opacity)+">>"))
	w.stream(open, []byte("q\n"))
	marks := make(map[[4]float64]int) // one content stream per page box
	for _, pg := range pages {
		mark, ok := marks[pg.box]
		if !ok {
			mark = alloc()
			marks[pg.box] = mark
			w.stream(mark, content(pg.box, m.Margins, text, name))
		}
		contents, err := f.contents(pg.dict)
		if err != nil {
			return nil, fmt.Errorf("page object %d: %w", pg.num, err)
		}
		resources, err := f.addResources(pg.resources, name, ref(font, 0), ref(gs, 0))
		if err != nil {
			return nil, fmt.Errorf("page object %d: %w", pg.num, err)
		}
		var d bytes.Buffer
		d.WriteString("<<")
		for _, e := range pg.dict.entries {
			if e.key != "Contents" && e.key != "Resources" {
				writeEntry(&d, e)
			}
		}
		d.WriteString("/Resources ")
		d.Write(resources)
		d.WriteString("\n/Contents [" + ref(open, 0))
		for _, c := range contents {
			d.WriteByte(' ')
			d.Write(c)
		}
		d.WriteString(" " + ref(mark, 0) + "]>>")
		w.object(pg.num, pg.gen, d.Bytes())
		if len(w.out) > limit {
			return nil, tooLarge
		}
	}
	if len(w.out)+xrefLen(next)+len(f.trailer.raw)+64 > limit {
		return nil, tooLarge
	}
	return w.finish(f, next), nil
}

// content is the mark's content stream for a page box. It first closes the
// q that opens the page's content, so it draws in the page's default
// coordinates and state. It is an artifact, which assistive technology
// skips in a tagged PDF.
func content(box [4]float64, margins [4]float64, text []byte, name string) []byte {
	x0, y0, x1, y1 := box[0]+margins[3], box[1]+margins[2], box[2]-margins[1], box[3]-margins[0]
	if x1-x0 < 1 || y1-y0 < 1 {
		x0, y0, x1, y1 = box[0], box[1], box[2], box[3]
	}
	w, h := x1-x0, y1-y0
	// The style stage's sizing: three quarters of the text area's
	// diagonal at about 0.68 em a character, at most a fifth of its short
	// side, at least 4 pt.
	n := float64(len(text))
	size := math.Max(4, math.Min(0.75*math.Hypot(w, h)/(0.68*n), 0.2*math.Min(w, h)))
	tc := spacing * size
	width := advance(text)*size + tc*(n-1)
	// Start half the line before the centre, the capitals centred on it.
	cos, sin := math.Cos(angle), math.Sin(angle)
	dx, dy := -width/2, -capHeight*size/2
	ex := (x0+x1)/2 + dx*cos - dy*sin
	ey := (y0+y1)/2 + dx*sin + dy*cos
	tm := fmt.Sprintf("%s %s %s %s %s %s Tm\n", num(cos), num(sin), num(-sin), num(cos), num(ex), num(ey))
	var b bytes.Buffer
	b.WriteString("Q\nq\n/Artifact <</Type /Pagination /Subtype /Watermark>> BDC\n")
	// The halo is stroked first, so the fill covers its inner half.
	fmt.Fprintf(&b, "/%s gs\n%s %s %s rg\n1 1 1 RG\n%s w\n1 j\n1 Tr\nBT\n/%s %s Tf\n%s Tc\n",
		name, num(grey), num(grey), num(grey), num(halo*size), name, num(size), num(tc))
	b.WriteString(tm + literal(text) + " Tj\n")
	b.WriteString("0 Tr\n" + tm + literal(text) + " Tj\n")
	b.WriteString("ET\nEMC\nQ\n")
	return b.Bytes()
}

// maxObjects is the most indirect objects a PDF may have (ISO 32000-1,
// Annex C), which keeps the numbers of the new ones in an int.
const maxObjects = 8388607

// num writes a PDF real: no exponent, four decimals at most.
func num(v float64) string {
	s := strings.TrimRight(strings.TrimRight(strconv.FormatFloat(v, 'f', 4, 64), "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

func writeEntry(b *bytes.Buffer, e entry) {
	b.WriteByte('/')
	b.Write(e.rawKey)
	b.WriteByte(' ')
	b.Write(e.val.raw)
	b.WriteByte('\n')
}

// page is one leaf of the page tree, with what it inherits resolved.
type page struct {
	num, gen  int
	dict      value
	resources value      // a dictionary, empty when the page has none
	box       [4]float64 // the crop box, else the media box: x0 y0 x1 y1
}

// pages walks the page tree in order.
func (f *file) pages() ([]page, error) {
	root, err := f.resolve(getOr(f.trailer, "Root", value{}))
	if err != nil {
		return nil, err
	}
	if root.kind != kDict {
		return nil, fmt.Errorf("%w: no document catalog", errSyntax)
	}
	var out []page
	seen := make(map[int]bool)
	type inherited struct{ resources, mediaBox, cropBox value }
	var walk func(node value, inh inherited, depth int) error
	walk = func(node value, inh inherited, depth int) error {
		if node.kind != kRef {
			return fmt.Errorf("%w: a page tree node %q is not a reference", errSyntax, node.raw)
		}
		if seen[node.obj] || depth > maxDepth {
			return fmt.Errorf("%w: the page tree loops or is too deep at object %d", errSyntax, node.obj)
		}
		seen[node.obj] = true
		d, _, err := f.object(node.obj)
		if err != nil {
			return err
		}
		if d.kind != kDict {
			return fmt.Errorf("%w: page tree node %d is not a dictionary", errSyntax, node.obj)
		}
		inh.resources = getOr(d, "Resources", inh.resources)
		inh.mediaBox = getOr(d, "MediaBox", inh.mediaBox)
		inh.cropBox = getOr(d, "CropBox", inh.cropBox)
		typ, _ := d.get("Type")
		kids, hasKids := d.get("Kids")
		if typ.name == "Pages" || typ.kind != kName && hasKids {
			if kids, err = f.resolve(kids); err != nil {
				return err
			}
			for _, kid := range kids.elems {
				if err := walk(kid, inh, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		if typ.kind == kName && typ.name != "Page" {
			return fmt.Errorf("%w: page tree node %d is a /%s", errSyntax, node.obj, typ.name)
		}
		pg := page{num: node.obj, gen: f.xref[node.obj].gen, dict: d}
		if pg.resources, err = f.resolve(inh.resources); err != nil {
			return err
		}
		switch pg.resources.kind {
		case kDict:
		case kOther: // none, or null
			pg.resources = value{kind: kDict}
		default:
			return fmt.Errorf("%w: the resources of page %d are %q", errSyntax, node.obj, pg.resources.raw)
		}
		box := inh.cropBox
		if box.raw == nil {
			box = inh.mediaBox
		}
		if pg.box, err = f.rect(box); err != nil {
			return fmt.Errorf("page %d: %w", node.obj, err)
		}
		out = append(out, pg)
		return nil
	}
	pagesRoot, ok := root.get("Pages")
	if !ok {
		return nil, fmt.Errorf("%w: the catalog has no /Pages", errSyntax)
	}
	return out, walk(pagesRoot, inherited{}, 0)
}

// getOr returns a dictionary's value for key, or else v.
func getOr(d value, key string, v value) value {
	if own, ok := d.get(key); ok {
		return own
	}
	return v
}

// rect reads a rectangle, normalised to x0 y0 x1 y1 with x0 < x1, y0 < y1.
func (f *file) rect(v value) ([4]float64, error) {
	v, err := f.resolve(v)
	if err != nil {
		return [4]float64{}, err
	}
	if v.kind != kArray || len(v.elems) != 4 {
		return [4]float64{}, fmt.Errorf("%w: no page box (%q)", errSyntax, v.raw)
	}
	var r [4]float64
	for i, e := range v.elems {
		if e.kind != kNumber {
			return [4]float64{}, fmt.Errorf("%w: page box %q", errSyntax, v.raw)
		}
		r[i] = e.num
	}
	return [4]float64{min(r[0], r[2]), min(r[1], r[3]), max(r[0], r[2]), max(r[1], r[3])}, nil
}

// contents returns the references of a page's content streams.
func (f *file) contents(d value) ([][]byte, error) {
	c, ok := d.get("Contents")
	if !ok {
		return nil, nil // a blank page
	}
	if c.kind == kRef {
		v, stream, err := f.object(c.obj)
		if err != nil {
			return nil, err
		}
		if stream {
			return [][]byte{c.raw}, nil
		}
		c = v // an indirect array of streams
	}
	if c.kind != kArray {
		return nil, fmt.Errorf("%w: /Contents is %q", errSyntax, c.raw)
	}
	out := make([][]byte, 0, len(c.elems))
	for _, e := range c.elems {
		if e.kind != kRef {
			return nil, fmt.Errorf("%w: a content stream %q is not a reference", errSyntax, e.raw)
		}
		out = append(out, e.raw)
	}
	return out, nil
}

// subdicts are the resource categories the mark adds to.
var subdicts = [...]string{"Font", "ExtGState"}

// freeName returns a resource name that no page uses for a font or a
// graphics state, so one content stream serves every page.
func (f *file) freeName(pages []page) (string, error) {
	taken := make(map[string]bool)
	// Dictionaries that pages share are read once: their first byte in
	// the file tells them apart.
	read := make(map[*byte]bool)
	for _, pg := range pages {
		for _, key := range subdicts {
			sub, err := f.resolve(getOr(pg.resources, key, value{}))
			if err != nil {
				return "", err
			}
			if len(sub.raw) == 0 || read[&sub.raw[0]] {
				continue
			}
			read[&sub.raw[0]] = true
			for _, e := range sub.entries {
				taken[e.key] = true
			}
		}
	}
	name := "MdpressWatermark"
	for i := 1; taken[name]; i++ {
		name = "MdpressWatermark" + strconv.Itoa(i)
	}
	return name, nil
}

// addResources writes res with the mark's font and graphics state added
// under name. Indirect font and graphics state dictionaries are copied in,
// so that nothing else that shares them changes.
func (f *file) addResources(res value, name, font, gs string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("<<")
	for _, e := range res.entries {
		if !slices.Contains(subdicts[:], e.key) {
			writeEntry(&b, e)
		}
	}
	for _, key := range subdicts {
		sub, err := f.resolve(getOr(res, key, value{}))
		if err != nil {
			return nil, err
		}
		if sub.kind != kDict && sub.raw != nil && string(sub.raw) != "null" {
			return nil, fmt.Errorf("%w: /%s resources are %q", errSyntax, key, sub.raw)
		}
		b.WriteString("/" + key + " <<")
		for _, e := range sub.entries {
			writeEntry(&b, e)
		}
		b.WriteString("/" + name + " ")
		if key == "Font" {
			b.WriteString(font)
		} else {
			b.WriteString(gs)
		}
		b.WriteString(">>\n")
	}
	b.WriteString(">>")
	return b.Bytes(), nil
}

// PageCount counts the pages of a PDF that Stamp reads, as Stamp finds
// them: by walking the page tree.
func PageCount(pdf []byte) (int, error) {
	f, err := readFile(pdf)
	if err != nil {
		return 0, fmt.Errorf("read pdf: %w", err)
	}
	pages, err := f.pages()
	if err != nil {
		return 0, fmt.Errorf("read pages: %w", err)
	}
	return len(pages), nil
}
