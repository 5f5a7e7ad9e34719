package layout

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	imagecolor "image/color"
	"image/png"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
	"github.com/mdpress/mdpress/sdk/stage"
)

var testFonts = sync.OnceValues(fonts.Load)

var a4 = stage.PageSize{Name: "A4", WidthPt: 595.28, HeightPt: 841.89}

func lay(t testing.TB, children ...*stage.Node) *Doc {
	t.Helper()
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	d, err := Layout(context.Background(), n(stage.KindDocument, children...), Options{Page: a4, Fonts: set})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func n(kind stage.Kind, children ...*stage.Node) *stage.Node {
	return &stage.Node{Kind: kind, Children: children}
}

func with(node *stage.Node, kv ...string) *stage.Node {
	node.Attrs = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		node.Attrs[kv[i]] = kv[i+1]
	}
	return node
}

func txt(s string) *stage.Node          { return &stage.Node{Kind: stage.KindText, Text: s} }
func raw(s string) *stage.Node          { return &stage.Node{Kind: stage.KindRawHTML, Text: s} }
func para(c ...*stage.Node) *stage.Node { return n(stage.KindParagraph, c...) }

// placed is a text item with its page.
type placed struct {
	Item
	page int
}

func texts(d *Doc) []placed {
	var out []placed
	for p, page := range d.Pages {
		for _, it := range page.Items {
			if it.Kind == Text {
				out = append(out, placed{it, p})
			}
		}
	}
	return out
}

func find(t testing.TB, d *Doc, s string) placed {
	t.Helper()
	for _, p := range texts(d) {
		if strings.Contains(p.Text, s) {
			return p
		}
	}
	t.Fatalf("no text item contains %q", s)
	return placed{}
}

func items(d *Doc, kind Kind) []Item {
	var out []Item
	for _, page := range d.Pages {
		for _, it := range page.Items {
			if it.Kind == kind {
				out = append(out, it)
			}
		}
	}
	return out
}

func TestInlineStyles(t *testing.T) {
	d := lay(t, para(
		txt("plain "), n(stage.KindStrong, txt("heavy")), txt(" "), n(stage.KindEmphasis, txt("slanted")), txt(" "),
		n(stage.KindStrong, n(stage.KindEmphasis, txt("both"))), txt(" "), n(stage.KindStrikethrough, txt("gone")),
		txt(" "), &stage.Node{Kind: stage.KindCodeSpan, Text: "mono"},
	))
	for s, face := range map[string]fonts.ID{
		"plain": fonts.Of(fonts.Sans, fonts.Regular), "heavy": fonts.Of(fonts.Sans, fonts.Bold),
		"slanted": fonts.Of(fonts.Sans, fonts.Italic), "both": fonts.Of(fonts.Sans, fonts.BoldItalic),
		"mono": fonts.Of(fonts.Mono, fonts.Regular),
	} {
		if got := find(t, d, s).Face; got != face {
			t.Errorf("%q drawn with face %d, want %d", s, got, face)
		}
	}
	gone := find(t, d, "gone")
	var struck bool
	for _, l := range items(d, Line) {
		if l.X >= gone.X-0.1 && l.Y < gone.Y && l.Y > gone.Y-gone.Size {
			struck = true
		}
	}
	if !struck {
		t.Error("no strikethrough line over the struck text")
	}
	mono := find(t, d, "mono")
	var shaded bool
	for _, f := range items(d, Fill) {
		if f.X < mono.X && f.X+f.W > mono.X && f.Y < mono.Y && f.Y+f.H > mono.Y-mono.Size*0.5 {
			shaded = true
		}
	}
	if !shaded {
		t.Error("inline code is not shaded")
	}
}

func TestInlineHTML(t *testing.T) {
	d := lay(t,
		para(txt("a "), raw("<b>"), txt("bolded"), raw("</b>"), txt(" "), raw(`<span style="font-weight:bold; color: #ff0000">`),
			txt("reddish"), raw("</span>"), raw("<br/>"), txt("next line "), raw("<script>"), txt("alert(1)"), raw("</script>"),
			txt("H"), raw("<sub>"), txt("2"), raw("</sub>"), txt(" "), raw("<blink>"), txt("kept"), raw("</blink>"),
			raw(`<a name="here"></a>`), txt(" end")),
		&stage.Node{Kind: stage.KindHTMLBlock, Text: "<div align=\"center\"><p>First <em>block</em></p><hr><p>Second &amp; last</p><style>p{}</style></div>\n"},
	)
	if f := find(t, d, "bolded").Face; f != fonts.Of(fonts.Sans, fonts.Bold) {
		t.Errorf("<b> face %d", f)
	}
	if c := find(t, d, "reddish").Color; c != (RGB{255, 0, 0}) {
		t.Errorf("<span style=color> colour %v", c)
	}
	if a, b := find(t, d, "reddish"), find(t, d, "next line"); b.Y <= a.Y {
		t.Error("<br> did not break the line")
	}
	if sub, h := find(t, d, "2"), find(t, d, "H"); sub.Y <= h.Y || sub.Size >= h.Size {
		t.Errorf("<sub>: baseline %.1f vs %.1f, size %.1f vs %.1f", sub.Y, h.Y, sub.Size, h.Size)
	}
	find(t, d, "kept")
	for _, p := range texts(d) {
		if strings.Contains(p.Text, "alert") || strings.Contains(p.Text, "p{}") {
			t.Errorf("hidden element content drawn: %q", p.Text)
		}
	}
	if _, ok := d.Anchors["here"]; !ok {
		t.Error(`<a name="here"> is not an anchor`)
	}
	first, second := find(t, d, "First"), find(t, d, "Second & last")
	if second.Y <= first.Y {
		t.Error("<p> in an HTML block did not start a new paragraph")
	}
	if mid := d.Width / 2; first.X < mid-150 {
		t.Errorf("align=center paragraph starts at x=%.1f", first.X)
	}
	var rule bool
	for _, l := range items(d, Line) {
		if l.Y > first.Y && l.Y < second.Y && l.X2-l.X > 400 {
			rule = true
		}
	}
	if !rule {
		t.Error("<hr> drew no rule")
	}
}

// TestDroppedHTMLLogged: an element outside the supported subset is
// dropped, its text kept, and named in the log once per document, so an
// operator can see what a client's HTML lost; supported elements are not.
func TestDroppedHTMLLogged(t *testing.T) {
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	root := n(stage.KindDocument,
		para(raw("<blink>"), txt("one"), raw("</blink>"), raw("<b>"), txt("two"), raw("</b>"),
			raw("<marquee>"), txt("three"), raw("</marquee>"), raw("<blink>"), txt("four"), raw("</blink>"),
			raw(`<span style="color:red">`), txt("five"), raw("</span>")),
		&stage.Node{Kind: stage.KindHTMLBlock, Text: "<div><blink>six</blink><u>seven</u></div>\n"},
	)
	d, err := Layout(context.Background(), root, Options{Page: a4, Fonts: set, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"one", "two", "three", "four", "five", "six", "seven"} {
		find(t, d, word)
	}
	out := logs.String()
	if got := strings.Count(out, "tag=blink"); got != 1 {
		t.Errorf("<blink> logged %d times, want once:\n%s", got, out)
	}
	if !strings.Contains(out, "tag=marquee") {
		t.Errorf("<marquee> not logged:\n%s", out)
	}
	for _, tag := range []string{"b", "span", "div", "u"} {
		if strings.Contains(out, "tag="+tag+"\n") {
			t.Errorf("supported <%s> logged as dropped:\n%s", tag, out)
		}
	}
}

// TestLineLimit: long words in narrow table columns break into a line per
// character, all held before the table is placed; the document stops with
// ErrTooManyLines at the limit rather than growing without bound.
func TestLineLimit(t *testing.T) {
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	word := strings.Repeat("w", 400)
	var cells []*stage.Node
	for range 40 {
		cells = append(cells, n(stage.KindTableCell, txt(word)))
	}
	table := n(stage.KindTable, n(stage.KindTableRow, cells...))
	opt := Options{Page: a4, Fonts: set, maxLines: 5000}
	if _, err := Layout(context.Background(), n(stage.KindDocument, table), opt); !errors.Is(err, ErrTooManyLines) {
		t.Fatalf("40 columns of 400-letter words: %v, want ErrTooManyLines", err)
	}
	// The same words in a paragraph fit the same limit easily.
	if _, err := Layout(context.Background(), n(stage.KindDocument, para(txt(strings.Repeat(word+" ", 40)))), opt); err != nil {
		t.Fatal(err)
	}
}

func TestLists(t *testing.T) {
	item := func(s string, kv ...string) *stage.Node { return with(n(stage.KindListItem, para(txt(s))), kv...) }
	innermost := n(stage.KindList, item("innermost"))
	inner := n(stage.KindList, n(stage.KindListItem, para(txt("inner")), innermost))
	outer := n(stage.KindList, n(stage.KindListItem, para(txt("outer")), inner))
	d := lay(t,
		with(n(stage.KindList, item("seventh"), item("eighth")), "ordered", "true", "start", "7", "tight", "true"),
		outer,
		n(stage.KindList, item("done", "task", "true", "checked", "true"), item("todo", "task", "true")),
	)
	for text, marker := range map[string]string{"seventh": "7.", "eighth": "8.", "outer": "•", "inner": "◦", "innermost": "▪"} {
		it := find(t, d, text)
		var m *placed
		for _, p := range texts(d) {
			if p.Text == marker && math.Abs(p.Y-it.Y) < 0.01 {
				m = &p
			}
		}
		if m == nil || m.X >= it.X {
			t.Errorf("%q has no marker %q on its baseline, left of it", text, marker)
		}
	}
	if in, out := find(t, d, "innermost"), find(t, d, "outer"); in.X <= out.X {
		t.Error("nested lists are not indented")
	}
	done, todo := find(t, d, "done"), find(t, d, "todo")
	var ticked, open bool
	for _, f := range items(d, Fill) {
		ticked = ticked || (f.X+f.W < done.X && f.Y < done.Y && f.Y+f.H > done.Y-done.Size/2)
	}
	for _, s := range items(d, Stroke) {
		open = open || (s.X+s.W < todo.X && s.Y < todo.Y && s.Y+s.H > todo.Y-todo.Size/2)
	}
	if !ticked || !open {
		t.Errorf("check boxes: ticked %v, open %v", ticked, open)
	}
}

// TestHeadingKeepsWithNext sweeps filler so the heading falls at every
// position near the foot of the first page.
func TestHeadingKeepsWithNext(t *testing.T) {
	moved := 0
	for lines := 30; lines < 60; lines++ {
		var kids []*stage.Node
		for range lines {
			kids = append(kids, para(txt("filler")))
		}
		kids = append(kids, with(n(stage.KindHeading, txt("Heading")), "level", "2"), para(txt("follower")))
		d := lay(t, kids...)
		h, f := find(t, d, "Heading"), find(t, d, "follower")
		if h.page != f.page {
			t.Fatalf("%d lines: heading on page %d, what follows on page %d", lines, h.page+1, f.page+1)
		}
		if h.page > 0 {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("the sweep never moved the heading; it tests nothing")
	}
}

func TestFootnotesAtEnd(t *testing.T) {
	fnRef := with(&stage.Node{Kind: stage.KindFootnoteRef}, "index", "1", "id", "fn:1")
	notes := n(stage.KindFootnotes, with(n(stage.KindFootnote, para(txt("the note"))), "index", "1", "id", "fn:1"))
	d := lay(t, para(txt("claim"), fnRef), notes, para(txt("after the list")))
	all := texts(d)
	if len(all) < 2 || !strings.HasPrefix(all[len(all)-2].Text, "the note") || all[len(all)-1].Text != "↩" {
		t.Errorf("the document ends with %+v, want the footnote and its back link", all[max(len(all)-2, 0):])
	}
	mark := find(t, d, "1")
	if claim := find(t, d, "claim"); mark.Y >= claim.Y || mark.Size >= claim.Size {
		t.Error("footnote reference is not a superscript")
	}
	if _, ok := d.Anchors[footnoteAnchor("1")]; !ok {
		t.Error("footnote has no anchor")
	}
	var linked bool
	for _, l := range items(d, LinkAnchor) {
		linked = linked || l.Text == footnoteAnchor("1")
	}
	if !linked {
		t.Error("footnote reference does not link to the note")
	}
	back := footnoteRefAnchor("1", "0")
	if a, ok := d.Anchors[back]; !ok || a.Page != mark.page || a.Y > mark.Y {
		t.Errorf("reference anchored at %+v (found %v), want above the mark on its page", a, ok)
	}
	linked = false
	for _, l := range items(d, LinkAnchor) {
		linked = linked || l.Text == back
	}
	if !linked {
		t.Error("the note's back link does not lead to the reference")
	}
}

// TestTextStaysInColumn checks every text item against the content box on
// a narrow page, with long words, code and a wide table.
func TestTextStaysInColumn(t *testing.T) {
	set, _ := testFonts()
	long := strings.Repeat("Supercalifragilistic", 12)
	cells := func(kind stage.Kind, s ...string) *stage.Node {
		row := n(kind)
		for _, c := range s {
			row.Children = append(row.Children, n(stage.KindTableCell, txt(c)))
		}
		return row
	}
	tree := n(stage.KindDocument,
		para(txt("start "+long+" end")),
		&stage.Node{Kind: stage.KindCodeBlock, Text: "\t" + long + "\n"},
		n(stage.KindTable, cells(stage.KindTableHead, "a", "b", "c", "d", "e", "f"),
			cells(stage.KindTableRow, long, "x", long, "y", long, "z")),
		n(stage.KindBlockquote, n(stage.KindBlockquote, n(stage.KindBlockquote, para(txt(long))))),
	)
	for _, page := range []stage.PageSize{a4, {Name: "A9", WidthPt: 104.88, HeightPt: 147.40}} {
		d, err := Layout(context.Background(), tree, Options{Page: page, Fonts: set})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range texts(d) {
			f := set.Face(p.Face)
			w := 0
			for _, r := range p.Text {
				w += f.Width(r)
			}
			right := p.X + float64(w)*p.Size/1000
			if p.X < d.Content.X0-0.01 || right > d.Content.X1+0.01 || p.Y > d.Content.Y1+0.01 || p.Y-p.Size < d.Content.Y0-0.01 {
				t.Errorf("%s: %q at x %.1f..%.1f y %.1f leaves the content box %+v", page.Name, p.Text, p.X, right, p.Y, d.Content)
			}
		}
		// Shading, borders and rules too, give or take the padding of inline code.
		const tol = 3
		for pi, pg := range d.Pages {
			for _, it := range pg.Items {
				x0, y0, x1, y1 := it.X, it.Y, it.X+it.W, it.Y+it.H
				if it.Kind == Line {
					x0, y0, x1, y1 = math.Min(it.X, it.X2), math.Min(it.Y, it.Y2), math.Max(it.X, it.X2), math.Max(it.Y, it.Y2)
				}
				if it.Kind != Text && (x0 < d.Content.X0-tol || x1 > d.Content.X1+tol || y0 < d.Content.Y0-tol || y1 > d.Content.Y1+tol) {
					t.Errorf("%s page %d: item %+v leaves the content box %+v", page.Name, pi+1, it, d.Content)
				}
			}
		}
	}
}

func TestFallbackAndReplacement(t *testing.T) {
	set, _ := testFonts()
	tree := n(stage.KindDocument, para(txt("serif ✓ 😀 zero\u200bwidth")))
	d, err := Layout(context.Background(), tree, Options{Page: a4, Fonts: set, Tokens: stage.Tokens{BodyFont: "serif"}})
	if err != nil {
		t.Fatal(err)
	}
	if f := find(t, d, "serif").Face; f != fonts.Of(fonts.Serif, fonts.Regular) {
		t.Errorf("body face %d", f)
	}
	if f := find(t, d, "✓").Face; f != fonts.Of(fonts.Sans, fonts.Regular) {
		t.Errorf("a mark serif lacks is drawn with face %d, want sans", f)
	}
	find(t, d, "\uFFFD")
	find(t, d, "zerowidth")
}

func TestHostileTrees(t *testing.T) {
	deep := para(txt("deepest"))
	for range 5000 {
		deep = n(stage.KindBlockquote, deep)
	}
	inline := txt("innermost")
	for range 5000 {
		inline = n(stage.KindEmphasis, inline)
	}
	list := n(stage.KindListItem, para(txt("listed")))
	for range 2000 {
		list = n(stage.KindListItem, n(stage.KindList, list))
	}
	wide := n(stage.KindTableRow)
	for range 500 {
		wide.Children = append(wide.Children, n(stage.KindTableCell, txt("c")))
	}
	d := lay(t, deep, para(inline), n(stage.KindList, list), n(stage.KindTable, wide),
		nil, para(nil, txt("after nils")), &stage.Node{Kind: "no_such_kind", Children: []*stage.Node{txt("unknown kind")}},
		with(n(stage.KindHeading, txt("level 99")), "level", "99"))
	for _, s := range []string{"deepest", "innermost", "listed", "after nils", "unknown kind", "level 99"} {
		find(t, d, s)
	}
}

func TestLimits(t *testing.T) {
	set, _ := testFonts()
	var kids []*stage.Node
	for range 400 {
		kids = append(kids, para(txt(strings.Repeat("words and more words ", 40))))
	}
	tree := n(stage.KindDocument, kids...)
	if _, err := Layout(context.Background(), tree, Options{Page: a4, Fonts: set, MaxPages: 3}); !errors.Is(err, ErrTooManyPages) {
		t.Errorf("page limit: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Layout(ctx, tree, Options{Page: a4, Fonts: set}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestImages(t *testing.T) {
	encode := func(img image.Image, enc png.Encoder) string {
		var b bytes.Buffer
		if err := enc.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
	}
	small := image.NewNRGBA(image.Rect(0, 0, 8, 8))
	big := image.NewRGBA64(image.Rect(0, 0, 1200, 400)) // 16-bit: fpdf cannot embed it as is
	big.Set(1, 1, imagecolor.RGBA64{R: 0xffff, A: 0xffff})
	bomb := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01\x86\xa0\x00\x01\x86\xa0\x08\x02\x00\x00\x00")
	img := func(src string) *stage.Node {
		return with(n(stage.KindImage, txt("alt text")), "src", src, "alt", "alt text")
	}
	d := lay(t,
		para(txt("icon "), img(encode(small, png.Encoder{})), txt(" inline")),
		para(img(encode(big, png.Encoder{CompressionLevel: png.BestSpeed}))),
		para(img("data:image/png;base64,"+base64.StdEncoding.EncodeToString(bomb))),
	)
	boxes := items(d, ImageBox)
	if len(boxes) != 2 || len(d.Images) != 2 {
		t.Fatalf("%d image boxes, %d images; want 2 and 2", len(boxes), len(d.Images))
	}
	icon := find(t, d, "icon")
	if b := boxes[0]; math.Abs(b.W-6) > 0.01 || b.Y+b.H > icon.Y+0.01 || b.Y+b.H < icon.Y-1 {
		t.Errorf("inline image %+v does not sit on the baseline %.1f", b, icon.Y)
	}
	if b := boxes[1]; math.Abs(b.W-(d.Content.X1-d.Content.X0)) > 0.01 || math.Abs(b.H-b.W/3) > 0.01 {
		t.Errorf("wide image %+v is not scaled to the column", b)
	}
	if d.Images[1].Data[24] != 8 {
		t.Error("16-bit PNG was not re-encoded at 8 bits")
	}
	find(t, d, "alt text") // the bomb is refused from its header and shown as alt text
}

// TestBlocksAcrossPages checks that a block quote and a code block that
// run over a page break are drawn on each page: bar and shading included.
func TestBlocksAcrossPages(t *testing.T) {
	var quoted []*stage.Node
	for i := range 80 {
		quoted = append(quoted, para(txt("quoted line "+strings.Repeat("x", i%7))))
	}
	code := strings.Repeat("line of code\n", 150)
	d := lay(t, n(stage.KindBlockquote, quoted...), &stage.Node{Kind: stage.KindCodeBlock, Text: code})
	if len(d.Pages) < 3 {
		t.Fatalf("%d pages", len(d.Pages))
	}
	for pi, page := range d.Pages {
		var quoteText, codeText, bar, shade bool
		for _, it := range page.Items {
			switch {
			case it.Kind == Text && strings.HasPrefix(it.Text, "quoted"):
				quoteText = true
			case it.Kind == Text && it.Text == "line of code":
				codeText = true
			case it.Kind == Fill && it.W < 5:
				bar = true
			case it.Kind == Fill && it.W > 100:
				shade = true
			}
		}
		if quoteText != bar || codeText != shade {
			t.Errorf("page %d: quote text %v bar %v, code text %v shading %v", pi+1, quoteText, bar, codeText, shade)
		}
	}
	// Shading is drawn under the code: it comes first on the page.
	for pi, page := range d.Pages {
		shadeAt, textAt := -1, -1
		for i, it := range page.Items {
			if it.Kind == Fill && it.W > 100 && shadeAt < 0 {
				shadeAt = i
			}
			if it.Kind == Text && it.Text == "line of code" && textAt < 0 {
				textAt = i
			}
		}
		if textAt >= 0 && (shadeAt < 0 || shadeAt > textAt) {
			t.Errorf("page %d: code shading drawn after its text", pi+1)
		}
	}
}
