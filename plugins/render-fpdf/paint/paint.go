// Package paint draws a laid-out document with fpdf: the display list, page
// numbers, a watermark, links, bookmarks and metadata.
package paint

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/go-pdf/fpdf"

	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
	"github.com/mdpress/mdpress/plugins/render-fpdf/layout"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Options say how to paint.
type Options struct {
	Fonts     *fonts.Set
	Title     string
	Numbering stage.Numbering
	Watermark string
	// Lang is the document's language, a canonical BCP 47 tag, or empty.
	// fpdf writes it into the catalog unescaped, so it must hold nothing
	// but letters, digits and hyphens.
	Lang string
	// Compress deflates the page content streams; fonts are always
	// deflated.
	Compress bool
	Now      time.Time
	// FullFonts hands fpdf the whole font files through its UTF-8 font
	// path, which parses and subsets them for this document alone: the
	// naive way, kept to measure what the per-document copies save.
	FullFonts bool
}

// Paint returns the PDF of doc. It stops with ctx's error when ctx ends.
func Paint(ctx context.Context, doc *layout.Doc, opt Options) ([]byte, error) {
	opt.Watermark = drawable(opt.Fonts.Face(watermarkFace), opt.Watermark)
	p := &painter{ctx: ctx, doc: doc, opt: opt}
	return p.paint()
}

// drawable keeps the characters of s the face can draw, replacing the others
// with U+FFFD as the layout does, and dropping control characters.
func drawable(f *fonts.Face, s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		switch {
		case r < 0x20 || r >= 0x7f && r < 0xa0:
		case f.Has(r):
			out = append(out, r)
		default:
			out = append(out, '\uFFFD')
		}
	}
	return strings.TrimSpace(string(out))
}

type painter struct {
	ctx context.Context
	doc *layout.Doc
	opt Options
	pdf *fpdf.Fpdf

	faces [fonts.MaxFaces]*fonts.Embedded
	font  string // fpdf family selected
	size  float64
	text  layout.RGB
	fill  layout.RGB
	draw  layout.RGB
	lw    float64
	fresh bool // nothing selected yet on this page

	links map[string]int // anchor name -> fpdf link id
}

const (
	watermarkColor = 150 // grey level
	watermarkAlpha = 0.22
	// watermarkOutline is the width of the white outline under the letters,
	// in ems.
	watermarkOutline = 0.12
	numberScale      = 0.8
)

func (p *painter) paint() ([]byte, error) {
	doc := p.doc
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: doc.Width, Ht: doc.Height}})
	p.pdf = pdf
	pdf.SetAutoPageBreak(false, 0)
	pdf.SetMargins(0, 0, 0)
	pdf.SetCompression(false) // deflateContents does it, cheaper
	pdf.SetCatalogSort(true)  // same input, same bytes
	pdf.SetCreator("mdpress render-fpdf", true)
	pdf.SetProducer("mdpress", true)
	pdf.SetLang(p.opt.Lang) // empty writes no /Lang
	if p.opt.Title != "" {
		// fpdf's own conversion mangles characters outside the BMP.
		pdf.SetTitle(utf16Text(p.opt.Title), false)
	}
	if !p.opt.Now.IsZero() {
		pdf.SetCreationDate(p.opt.Now)
		pdf.SetModificationDate(p.opt.Now)
	}

	p.registerFonts()
	for i, img := range doc.Images {
		if err := p.ctx.Err(); err != nil {
			return nil, err // each registration inflates the image
		}
		pdf.RegisterImageOptionsReader(imageName(i), fpdf.ImageOptions{ImageType: string(img.Type)}, bytes.NewReader(img.Data))
	}
	p.links = map[string]int{}
	for name, d := range doc.Anchors {
		id := pdf.AddLink()
		pdf.SetLink(id, d.Y, d.Page+1)
		p.links[name] = id
	}

	marks := doc.Outline
	for n, page := range doc.Pages {
		if err := p.ctx.Err(); err != nil {
			return nil, err
		}
		pdf.AddPage()
		p.fresh = true
		for len(marks) > 0 && marks[0].Page == n {
			p.bookmark(marks[0])
			marks = marks[1:]
		}
		for i := range page.Items {
			p.item(&page.Items[i])
		}
		p.pageNumber(n + 1)
		p.watermark()
		if err := pdf.Error(); err != nil {
			return nil, fmt.Errorf("page %d: %w", n+1, err)
		}
	}
	if err := pdf.Error(); err != nil {
		return nil, fmt.Errorf("draw: %w", err)
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("write pdf: %w", err)
	}
	return finish(buf.Bytes(), p.opt.Compress)
}

func imageName(i int) string { return "img" + strconv.Itoa(i) }

// registerFonts embeds each face the document draws with, its cmap cut to
// the characters drawn. Page numbers and the watermark are drawn here, so
// their characters are added first.
func (p *painter) registerFonts() {
	doc := p.doc
	body := runes(&doc.Used, doc.Body)
	for _, r := range "0123456789" {
		body.Add(r)
	}
	if p.opt.Watermark != "" {
		wm := runes(&doc.Used, watermarkFace)
		for _, r := range p.opt.Watermark {
			wm.Add(r)
		}
	}
	for id := fonts.ID(0); id < fonts.MaxFaces; id++ {
		used := doc.Used[id]
		if used == nil {
			continue
		}
		if !p.opt.FullFonts {
			p.faces[id] = p.opt.Fonts.Embed(p.pdf, id, used)
			continue
		}
		e, err := p.opt.Fonts.EmbedFull(p.pdf, id)
		if err != nil {
			p.pdf.SetError(err)
			return
		}
		p.faces[id] = e
	}
}

// bookmark adds an outline entry. fpdf writes its title as UTF-16 only
// when a UTF-8 font is selected; the fonts embedded here are simple fonts,
// so the title is given to fpdf already encoded.
func (p *painter) bookmark(m layout.Mark) {
	title := m.Text
	if p.opt.FullFonts {
		p.useFont(p.faces[p.doc.Body].Family(), p.doc.BodySize)
	} else {
		title = utf16Text(title)
	}
	p.pdf.Bookmark(title, m.Level, m.Y)
}

// utf16Text is s as a PDF text string in UTF-16BE with its byte order mark.
func utf16Text(s string) string {
	b := make([]byte, 2, 2+2*len(s))
	b[0], b[1] = 0xfe, 0xff
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u>>8), byte(u))
	}
	return string(b)
}

func runes(used *[fonts.MaxFaces]*fonts.Runes, id fonts.ID) *fonts.Runes {
	if used[id] == nil {
		used[id] = &fonts.Runes{}
	}
	return used[id]
}

func (p *painter) useFont(family string, size float64) {
	if p.fresh || family != p.font || size != p.size {
		p.pdf.SetFont(family, "", size)
		p.font, p.size = family, size
	}
	if p.fresh {
		p.pdf.SetTextColor(0, 0, 0)
		p.pdf.SetFillColor(0, 0, 0)
		p.pdf.SetDrawColor(0, 0, 0)
		p.pdf.SetLineWidth(1)
		p.text, p.fill, p.draw, p.lw = layout.RGB{}, layout.RGB{}, layout.RGB{}, 1
		p.fresh = false
	}
}

func (p *painter) textColor(c layout.RGB) {
	if c != p.text {
		p.pdf.SetTextColor(int(c.R), int(c.G), int(c.B))
		p.text = c
	}
}

func (p *painter) fillColor(c layout.RGB) {
	if c != p.fill {
		p.pdf.SetFillColor(int(c.R), int(c.G), int(c.B))
		p.fill = c
	}
}

func (p *painter) drawColor(c layout.RGB, lw float64) {
	if c != p.draw {
		p.pdf.SetDrawColor(int(c.R), int(c.G), int(c.B))
		p.draw = c
	}
	if lw != p.lw {
		p.pdf.SetLineWidth(lw)
		p.lw = lw
	}
}

func (p *painter) item(it *layout.Item) {
	pdf := p.pdf
	switch it.Kind {
	case layout.Text:
		if it.Synth != 0 {
			p.drawSynthetic(it)
			break
		}
		if it.Actual != 0 && !p.opt.FullFonts {
			p.drawActual(it, p.doc.Actual[it.Actual-1])
			break
		}
		p.drawText(it.Face, it.Size, it.Color, it.X, it.Y, it.Text)
	case layout.Fill:
		if it.W > 0 && it.H > 0 {
			p.fillColor(it.Color)
			pdf.Rect(it.X, it.Y, it.W, it.H, "F")
		}
	case layout.Stroke:
		p.drawColor(it.Color, it.LineWidth)
		pdf.Rect(it.X, it.Y, it.W, it.H, "D")
	case layout.Line:
		p.drawColor(it.Color, it.LineWidth)
		pdf.Line(it.X, it.Y, it.X2, it.Y2)
	case layout.ImageBox:
		if it.Text != "" {
			p.emoji(it)
			break
		}
		pdf.ImageOptions(imageName(it.Image), it.X, it.Y, it.W, it.H, false, fpdf.ImageOptions{}, 0, "")
	case layout.MathBegin:
		pdf.RawWriteStr("/Span <</ActualText <" + hex.EncodeToString([]byte(utf16Text(it.Text))) + ">>> BDC")
		p.anchorText(it, it.X)
	case layout.MathEnd:
		p.anchorText(it, it.X+it.W-mathAnchor)
		pdf.RawWriteStr("EMC")
	case layout.LinkURI:
		pdf.LinkString(it.X, it.Y, it.W, it.H, it.Text)
	case layout.LinkAnchor:
		if id, ok := p.links[it.Text]; ok {
			pdf.Link(it.X, it.Y, it.W, it.H, id)
		}
	}
}

// pageNumber draws n in the bottom margin, vertically centred in it.
func (p *painter) pageNumber(n int) {
	doc := p.doc
	var x float64
	s := strconv.Itoa(n)
	size := doc.BodySize * numberScale
	w := p.width(s, doc.Body, size)
	switch p.opt.Numbering {
	case stage.NumberingLeft:
		x = doc.Content.X0
	case stage.NumberingCenter:
		x = (doc.Width - w) / 2
	case stage.NumberingRight:
		x = doc.Content.X1 - w
	default:
		return
	}
	face := p.opt.Fonts.Face(doc.Body)
	margin := doc.Height - doc.Content.Y1
	y := doc.Content.Y1 + margin/2 + (face.Ascent-face.Descent)*size/2
	p.drawText(doc.Body, size, doc.Muted, x, y, s)
}

// drawText draws s at (x, y) in face at size, a piece per embedded font.
func (p *painter) drawText(face fonts.ID, size float64, c layout.RGB, x, y float64, s string) {
	e := p.faces[face]
	if e == nil {
		return
	}
	e.Each(s, func(family, text string, advance int) {
		p.useFont(family, size)
		p.textColor(c)
		p.pdf.Text(x, y, text)
		x += float64(advance) * size / 1000
	})
}

// drawActual draws a text item as drawText does, a text object per font
// at the same positions, with each of parts in a marked-content span whose
// ActualText is the characters it stands for (layout.Actual), so that
// extraction and copying give those rather than the presentation forms
// and mirrored brackets drawn. Spans go inside the text object, between
// its strings (BDC and EMC nest within BT and ET), so the glyphs sit where
// one string per font put them; a part drawn in two fonts gets a span in
// each, with the characters of its glyphs there. The operators are
// written here, as fpdf's Text writes them, because Text draws a whole
// string in its own text object; the colour is set inside q and Q, so
// fpdf's stays as it was.
func (p *painter) drawActual(it *layout.Item, parts []layout.ActualText) {
	e := p.faces[it.Face]
	if e == nil {
		return
	}
	face := p.opt.Fonts.Face(it.Face)
	var b, codes strings.Builder
	x, font, advance := it.X, -1, 0
	part, from, next := -1, 0, 0 // the part in a span, where the span began, the next part
	show := func() {
		if codes.Len() > 0 {
			b.WriteString(" (")
			b.WriteString(pdfEscaper.Replace(codes.String()))
			b.WriteString(") Tj")
			codes.Reset()
		}
	}
	closeSpan := func(at int) {
		if part < 0 {
			return
		}
		b.WriteString(" /Span <</ActualText <")
		b.WriteString(hex.EncodeToString([]byte(utf16Text(layout.Actual(it.Text[from:at], parts[part].Reversed)))))
		b.WriteString(">>> BDC")
		show()
		b.WriteString(" EMC")
		part = -1
	}
	begin := func(f int) {
		p.useFont(e.FamilyOf(f), it.Size)
		c := it.Color
		b.WriteString("q ")
		for _, v := range []uint8{c.R, c.G, c.B} {
			b.WriteString(strconv.FormatFloat(float64(v)/255, 'f', 3, 64))
			b.WriteByte(' ')
		}
		b.WriteString("rg BT ")
		b.WriteString(strconv.FormatFloat(x, 'f', 2, 64))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatFloat(p.doc.Height-it.Y, 'f', 2, 64))
		b.WriteString(" Td")
		font = f
	}
	end := func() {
		show()
		b.WriteString(" ET Q")
		p.pdf.RawWriteStr(b.String())
		b.Reset()
		x += float64(advance) * it.Size / 1000
		advance = 0
	}
	for i, r := range it.Text {
		f, code, ok := e.Code(r)
		if !ok {
			continue
		}
		if part >= 0 && i >= parts[part].End {
			closeSpan(i)
		}
		// The space is in every font: it never starts another text object.
		if font < 0 || f != font && r != ' ' {
			if font >= 0 {
				in := part
				closeSpan(i)
				end()
				if in >= 0 {
					part, from = in, i
				}
			}
			begin(f)
		}
		for next < len(parts) && parts[next].End <= i {
			next++
		}
		if part < 0 && next < len(parts) && i >= parts[next].Start {
			show()
			part, from = next, i
			next++
		}
		codes.WriteByte(code)
		advance += face.Width(r)
	}
	closeSpan(len(it.Text))
	if font >= 0 {
		end()
	}
}

var pdfEscaper = strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`, "\r", `\r`)

// obliqueAngle is the slant of synthetic oblique text, CSS's default for
// font-style: oblique, which Chromium uses when a font has no italic face.
const obliqueAngle = 14

// drawSynthetic draws a text item in the bold or oblique style its face
// lacks, as Chromium synthesizes them: bold by stroking the outlines, in
// the text's colour, as well as filling them, oblique by skewing the run
// about its baseline origin. The advances are the face's own, as in
// Chromium, so the run takes the width the layout measured. Each piece is
// drawn inside q/Q: the font is selected before it, since Q would restore
// the one before under useFont's cache, and fpdf's own line width and draw
// colour are set back before Q, so that they agree with the page's again.
func (p *painter) drawSynthetic(it *layout.Item) {
	e := p.faces[it.Face]
	if e == nil {
		return
	}
	pdf := p.pdf
	x := it.X
	e.Each(it.Text, func(family, text string, advance int) {
		p.useFont(family, it.Size)
		p.textColor(it.Color)
		pdf.TransformBegin()
		if it.Synth&layout.SynthOblique != 0 {
			pdf.TransformSkewX(obliqueAngle, x, it.Y)
		}
		if it.Synth&layout.SynthBold != 0 {
			pdf.SetDrawColor(int(it.Color.R), int(it.Color.G), int(it.Color.B))
			pdf.SetLineWidth(emboldenWidth(it.Size))
			pdf.SetTextRenderingMode(2) // fill, then stroke
		}
		pdf.Text(x, it.Y, text)
		if it.Synth&layout.SynthBold != 0 {
			pdf.SetDrawColor(int(p.draw.R), int(p.draw.G), int(p.draw.B))
			pdf.SetLineWidth(p.lw)
		}
		pdf.TransformEnd()
		x += float64(advance) * it.Size / 1000
	})
}

// emboldenWidth is the stroke width that makes text of size points bold,
// Skia's for Chromium's synthetic bold: a 24th of the size up to 9 px, a
// 32nd from 36 px, linear between.
func emboldenWidth(size float64) float64 {
	const lo, hi = 9 * 0.75, 36 * 0.75 // px in points
	t := math.Min(1, math.Max(0, (size-lo)/(hi-lo)))
	return size * (1.0/24 + t*(1.0/32-1.0/24))
}

var watermarkFace = fonts.Of(fonts.Sans, fonts.Bold)

// watermark draws the text diagonally across the page, light and
// translucent, over the content so that shaded blocks cannot hide it while
// the text underneath stays readable.
func (p *painter) watermark() {
	text := p.opt.Watermark
	if text == "" {
		return
	}
	doc := p.doc
	diag := math.Hypot(doc.Width, doc.Height)
	w1 := p.width(text, watermarkFace, 1)
	if w1 <= 0 {
		return
	}
	size := math.Min(diag*0.6/w1, math.Min(doc.Width, doc.Height)/4)
	angle := math.Atan2(doc.Height, doc.Width) * 180 / math.Pi
	cx, cy := doc.Width/2, doc.Height/2
	face := p.opt.Fonts.Face(watermarkFace)
	pdf := p.pdf
	pdf.TransformBegin()
	pdf.TransformRotate(angle, cx, cy)
	pdf.SetAlpha(watermarkAlpha, "Normal")
	x, y := cx-w1*size/2, cy+(face.Ascent-face.Descent)*size/2
	// A white outline under the grey letters: an image in the mark's own
	// grey hid the letters, and one in white hides the outline, but no one
	// colour hides both. fpdf keeps the line width and colour it last set,
	// so both are set back before the transform's state is dropped.
	lw := pdf.GetLineWidth()
	dr, dg, db := pdf.GetDrawColor()
	pdf.SetLineWidth(size * watermarkOutline)
	pdf.SetDrawColor(255, 255, 255)
	pdf.SetTextRenderingMode(1) // stroke
	p.drawText(watermarkFace, size, layout.RGB{R: 255, G: 255, B: 255}, x, y, text)
	pdf.SetTextRenderingMode(0)
	pdf.SetLineWidth(lw)
	pdf.SetDrawColor(dr, dg, db)
	grey := layout.RGB{R: watermarkColor, G: watermarkColor, B: watermarkColor}
	p.drawText(watermarkFace, size, grey, x, y, text)
	pdf.SetAlpha(1, "Normal")
	pdf.TransformEnd()
}

func (p *painter) width(s string, id fonts.ID, size float64) float64 {
	f := p.opt.Fonts.Face(id)
	w := 0
	for _, r := range s {
		w += f.Width(r)
	}
	return float64(w) * size / 1000
}

// emoji draws an emoji's image inside a marked-content span whose
// ActualText is its characters, so that text extraction and copying give
// the emoji in its place: readers (poppler, pdf.js, Acrobat) put a span's
// ActualText where the text drawn inside it is, and ignore images. That
// text is one invisible space (rendering mode 3) of the line's face,
// stretched over the emoji's advance. The font has no glyph for the
// emoji, so no other character would do.
func (p *painter) emoji(it *layout.Item) {
	pdf := p.pdf
	pdf.RawWriteStr("/Span <</ActualText <" + hex.EncodeToString([]byte(utf16Text(it.Text))) + ">>> BDC")
	pdf.ImageOptions(imageName(it.Image), it.X, it.Y, it.W, it.H, false, fpdf.ImageOptions{}, 0, "")
	if e := p.faces[it.Face]; e != nil {
		e.Each(" ", func(family, text string, advance int) {
			p.useFont(family, it.Size)
			pdf.TransformBegin()
			scale := 100.0
			if advance > 0 {
				scale = it.LineWidth / (float64(advance) * it.Size / 1000) * 100
			}
			pdf.RawWriteStr("3 Tr " + strconv.FormatFloat(scale, 'f', 2, 64) + " Tz")
			pdf.Text(it.X2, it.Y2, text)
			pdf.TransformEnd()
		})
	}
	pdf.RawWriteStr("EMC")
}

// mathAnchor is the advance of each of the two invisible spaces a
// formula's ActualText is anchored to, in points.
const mathAnchor = 0.01

// anchorText draws an invisible space (rendering mode 3) of the item's face
// and size at x on its baseline, squeezed to mathAnchor. A formula draws
// one at its start and one at its end inside its ActualText span: readers
// (poppler, pdf.js) place a span's ActualText from the first character
// drawn in it to the end of the last, so it spans the formula on its
// baseline, where its glyphs (a numerator, then a denominator) would give
// a box that starts and ends anywhere.
func (p *painter) anchorText(it *layout.Item, x float64) {
	e := p.faces[it.Face]
	if e == nil {
		return
	}
	pdf := p.pdf
	e.Each(" ", func(family, text string, advance int) {
		p.useFont(family, it.Size)
		pdf.TransformBegin()
		scale := 100.0
		if advance > 0 {
			scale = mathAnchor / (float64(advance) * it.Size / 1000) * 100
		}
		pdf.RawWriteStr("3 Tr " + strconv.FormatFloat(scale, 'f', 4, 64) + " Tz")
		pdf.Text(x, it.Y, text)
		pdf.TransformEnd()
	})
}
