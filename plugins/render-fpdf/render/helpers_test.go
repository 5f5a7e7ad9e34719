package render

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Builders for hand-made trees.

func nd(kind stage.Kind, children ...*stage.Node) *stage.Node {
	return &stage.Node{Kind: kind, Children: children}
}

func txt(s string) *stage.Node { return &stage.Node{Kind: stage.KindText, Text: s} }

func para(children ...*stage.Node) *stage.Node { return nd(stage.KindParagraph, children...) }

func doc(children ...*stage.Node) stage.Document {
	return stage.Document{Root: nd(stage.KindDocument, children...)}
}

func a4(t testing.TB) stage.PageSize {
	p, ok := papers.Lookup("A4")
	if !ok {
		t.Fatal("no A4")
	}
	return p
}

// pngB64 is a 40x20 PNG, red on the left half and green on the right.
const pngB64 = "iVBORw0KGgoAAAANSUhEUgAAACgAAAAUCAIAAABwJOjsAAAAKUlEQVR4nGM4ISdHNpJbYEM2Yhi1eNTiUYtHLR61eNTiUYtHLR45FgMAEJodDqLXU8MAAAAASUVORK5CYII="

func testImage(w, h int) *image.Paletted {
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.White, color.RGBA{0, 90, 200, 255}})
	for x := range w / 2 {
		for y := range h {
			img.SetColorIndex(x, y, 1)
		}
	}
	return img
}

func jpegB64(t testing.TB) string {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, testImage(16, 8), nil); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func gifB64(t testing.TB) string {
	var b bytes.Buffer
	if err := gif.Encode(&b, testImage(12, 6), nil); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func pngOf(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, testImage(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
