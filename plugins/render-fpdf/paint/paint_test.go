package paint

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
	"github.com/mdpress/mdpress/plugins/render-fpdf/layout"
	"github.com/mdpress/mdpress/sdk/stage"
)

var testFonts = sync.OnceValues(fonts.Load)

// handDoc is a display list made by hand: one page of text, a box, a rule
// and two links, one to an anchor that exists and one to one that does not.
func handDoc(t *testing.T) *layout.Doc {
	body := fonts.Of(fonts.Sans, fonts.Regular)
	used := &fonts.Runes{}
	for _, r := range "Hello" {
		used.Add(r)
	}
	d := &layout.Doc{
		Width: 300, Height: 200, Content: layout.Box{X0: 20, Y0: 20, X1: 280, Y1: 170},
		Body: body, BodySize: 10, Muted: layout.RGB{R: 90, G: 90, B: 90},
		Anchors: map[string]layout.Dest{"top": {Page: 0, Y: 20}},
		Outline: []layout.Mark{{Level: 0, Text: "Hello", Dest: layout.Dest{Page: 0, Y: 20}}},
		Pages: []*layout.Page{{Items: []layout.Item{
			{Kind: layout.Fill, X: 20, Y: 20, W: 100, H: 20, Color: layout.RGB{R: 240, G: 240, B: 240}},
			{Kind: layout.Text, X: 25, Y: 34, Text: "Hello", Face: body, Size: 10},
			{Kind: layout.Line, X: 20, Y: 50, X2: 280, Y2: 50, LineWidth: 1},
			{Kind: layout.Stroke, X: 20, Y: 60, W: 50, H: 20, LineWidth: 0.5},
			{Kind: layout.LinkAnchor, X: 25, Y: 24, W: 30, H: 12, Text: "top"},
			{Kind: layout.LinkAnchor, X: 25, Y: 24, W: 30, H: 12, Text: "missing"},
		}}},
	}
	d.Used[body] = used
	return d
}

func TestPaint(t *testing.T) {
	set, _ := testFonts()
	pdf, err := Paint(context.Background(), handDoc(t), Options{Fonts: set, Title: "Tïtle", Numbering: stage.NumberingRight, Watermark: "DRAFT"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.Contains(pdf, []byte("/Outlines")) {
		t.Fatal("not a PDF with an outline")
	}
	// One internal link: the one to a missing anchor is dropped.
	if n := bytes.Count(pdf, []byte("/Subtype /Link")); n != 1 {
		t.Errorf("%d link annotations, want 1", n)
	}
}

func TestPaintCancelled(t *testing.T) {
	set, _ := testFonts()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Paint(ctx, handDoc(t), Options{Fonts: set}); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

func TestDrawable(t *testing.T) {
	set, _ := testFonts()
	got := drawable(set.Face(watermarkFace), " \x00Entwurf 草稿 \u0007")
	if got != "Entwurf \uFFFD\uFFFD" {
		t.Errorf("drawable = %q", got)
	}
	if strings.ContainsRune(got, 0) {
		t.Error("control character kept")
	}
}

// deflatable is a document of several pages with enough text to compress.
func deflatable(t *testing.T, pages int) *layout.Doc {
	d := handDoc(t)
	line := layout.Item{Kind: layout.Text, X: 25, Y: 100, Text: "Hello Hello Hello Hello Hello Hello", Face: d.Body, Size: 10}
	for range 60 {
		d.Pages[0].Items = append(d.Pages[0].Items, line)
	}
	for range pages - 1 {
		d.Pages = append(d.Pages, &layout.Page{Items: d.Pages[0].Items})
	}
	return d
}

var streamRE = regexp.MustCompile(`(?s)(\d+) 0 obj\n<<(/Filter /FlateDecode )?/Length (\d+)>>\nstream\n`)

// pageStreams returns the data of the streams in fpdf's page content form,
// inflated where deflated, by object number.
func pageStreams(t *testing.T, pdf []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, m := range streamRE.FindAllSubmatchIndex(pdf, -1) {
		n, _ := strconv.Atoi(string(pdf[m[6]:m[7]]))
		data := pdf[m[1] : m[1]+n]
		if m[4] >= 0 {
			zr, err := zlib.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if data, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		out[string(pdf[m[2]:m[3]])] = data
	}
	return out
}

// TestDeflateContents checks that with compression on every page stream is
// deflated to what the uncompressed document holds, and that the rebuilt
// cross-reference table points at every object.
func TestDeflateContents(t *testing.T) {
	set, _ := testFonts()
	doc := deflatable(t, 5)
	plain, err := Paint(context.Background(), doc, Options{Fonts: set, Title: "T", Numbering: stage.NumberingCenter})
	if err != nil {
		t.Fatal(err)
	}
	packed, err := Paint(context.Background(), doc, Options{Fonts: set, Title: "T", Numbering: stage.NumberingCenter, Compress: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(packed) >= len(plain)*3/4 {
		t.Errorf("compressed %d bytes, uncompressed %d", len(packed), len(plain))
	}
	const deflated = "<</Filter /FlateDecode /Length"
	if n := bytes.Count(plain, []byte(deflated)); n != 0 {
		t.Errorf("compression off: %d deflated page streams", n)
	}
	if n := bytes.Count(packed, []byte(deflated)); n != len(doc.Pages) {
		t.Errorf("%d deflated page streams, want %d", n, len(doc.Pages))
	}
	want, got := pageStreams(t, plain), pageStreams(t, packed)
	if len(want) != len(doc.Pages) || len(got) != len(want) {
		t.Fatalf("%d page streams uncompressed, %d compressed, %d pages", len(want), len(got), len(doc.Pages))
	}
	for n, data := range want {
		if !bytes.Equal(got[n], data) {
			t.Errorf("object %s: inflated stream differs from the uncompressed one", n)
		}
	}
	checkXref(t, packed)
	if _, err := exec.LookPath("qpdf"); err == nil {
		f := t.TempDir() + "/doc.pdf"
		if err := os.WriteFile(f, packed, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("qpdf", "--check", f).CombinedOutput(); err != nil {
			t.Errorf("qpdf --check: %v\n%s", err, out)
		}
	}
}

// checkXref requires each entry of pdf's cross-reference table to point at
// its object, and startxref at the table.
func checkXref(t *testing.T, pdf []byte) {
	t.Helper()
	at, offsets, _, err := readXref(pdf)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf[at:], []byte("xref\n")) {
		t.Error("startxref does not point at the table")
	}
	for n := 1; n < len(offsets); n++ {
		if !bytes.HasPrefix(pdf[offsets[n]:], []byte(strconv.Itoa(n)+" 0 obj\n")) {
			t.Errorf("xref entry %d points at %q", n, pdf[offsets[n]:min(len(pdf), offsets[n]+12)])
		}
	}
}

// TestDeflateContentsMalformed feeds deflateContents what fpdf never
// writes: it must refuse, never panic or write a broken file.
func TestDeflateContentsMalformed(t *testing.T) {
	set, _ := testFonts()
	pdf, err := Paint(context.Background(), deflatable(t, 2), Options{Fonts: set})
	if err != nil {
		t.Fatal(err)
	}
	xref := bytes.LastIndex(pdf, []byte("xref\n0 "))
	bad := map[string][]byte{
		"empty":                  nil,
		"no startxref":           pdf[:len(pdf)-30],
		"startxref past the end": append(bytes.Clone(pdf[:len(pdf)-len("%%EOF\n")-2]), "9\n%%EOF\n"...),
		"more entries than held": bytes.Replace(bytes.Clone(pdf), []byte("xref\n0 "), []byte("xref\n0 9"), 1),
	}
	corrupt := bytes.Clone(pdf)
	entry := bytes.Index(corrupt[xref:], []byte(" 00000 n ")) + xref - 10
	copy(corrupt[entry:], "9999999999")
	bad["offset past the table"] = corrupt
	for name, in := range bad {
		if out, err := deflateContents(in); !errors.Is(err, errLayout) {
			t.Errorf("%s: %d bytes, err %v; want errLayout", name, len(out), err)
		}
	}
	// Every truncation fails cleanly or, cut only inside the last bytes,
	// still yields a readable table.
	for n := 0; n < len(pdf); n += 97 {
		if out, err := deflateContents(pdf[:n]); err == nil {
			checkXref(t, out)
		}
	}
}

// TestCatalogEntries: the catalog has viewers show the title, compressed
// or not, carries the language when one is given and none otherwise, and
// the cross-reference table still points at every object.
func TestCatalogEntries(t *testing.T) {
	set, _ := testFonts()
	for _, compress := range []bool{false, true} {
		for _, lang := range []string{"", "pt-BR"} {
			pdf, err := Paint(context.Background(), handDoc(t), Options{Fonts: set, Title: "T", Lang: lang, Compress: compress})
			if err != nil {
				t.Fatal(err)
			}
			_, cat, ok := bytes.Cut(pdf, []byte("/Type /Catalog\n"))
			cat, _, _ = bytes.Cut(cat, []byte("endobj"))
			if !ok || !bytes.Contains(cat, []byte("/ViewerPreferences << /DisplayDocTitle true >>")) {
				t.Errorf("compress %v: catalog %q lacks /DisplayDocTitle", compress, cat)
			}
			if got := bytes.Contains(cat, []byte("/Lang (pt-BR)")); got != (lang != "") || lang == "" && bytes.Contains(cat, []byte("/Lang")) {
				t.Errorf("compress %v, lang %q: catalog %q", compress, lang, cat)
			}
			checkXref(t, pdf)
		}
	}
}
