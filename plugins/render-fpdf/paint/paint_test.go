package paint

import (
	"bytes"
	"context"
	"errors"
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

// TestSmallContentStored checks that compression leaves a document's page
// streams uncompressed when they are too small to gain from it, and
// deflates them otherwise.
func TestSmallContentStored(t *testing.T) {
	set, _ := testFonts()
	small := handDoc(t)
	large := handDoc(t)
	line := layout.Item{Kind: layout.Text, X: 25, Y: 100, Text: "Hello Hello Hello Hello Hello Hello", Face: large.Body, Size: 10}
	for range 60 {
		large.Pages[0].Items = append(large.Pages[0].Items, line)
	}
	const deflated = "<</Filter /FlateDecode /Length" // how fpdf opens a compressed page stream
	for _, c := range []struct {
		name     string
		doc      *layout.Doc
		compress bool
		want     int
	}{
		{"small", small, true, 0},
		{"large", large, true, 1},
		{"large, compression off", large, false, 0},
	} {
		pdf, err := Paint(context.Background(), c.doc, Options{Fonts: set, Compress: c.compress})
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(pdf, []byte(deflated)); n != c.want {
			t.Errorf("%s: %d deflated page streams, want %d", c.name, n, c.want)
		}
	}
	if n := contentSize(small); n >= deflateMin || n < 100 {
		t.Errorf("small document: content estimated at %d bytes", n)
	}
}
