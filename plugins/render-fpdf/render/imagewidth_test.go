package render

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"testing"
)

// redPNG is a data: URI of a w×h red PNG, easy to find on a rasterized
// page.
func redPNG(t testing.TB, w, h int) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{255, 0, 0, 255}}, image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

// redInk returns the box of the red pixels of the first page rasterized
// at 72 dpi (a pixel a point), and the page's width; ok is false when
// there are none.
func redInk(t testing.TB, pdf []byte) (x0, y0, x1, y1, pageW int, ok bool) {
	w, h, px := rasterRGB(t, pdf, 72)
	x0, y0, x1, y1 = w, h, -1, -1
	for y := range h {
		for x := range w {
			p := px[3*(y*w+x):]
			if p[0] > 200 && p[1] < 60 && p[2] < 60 {
				x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			}
		}
	}
	return x0, y0, x1 + 1, y1 + 1, w, x1 >= 0
}

// TestImageWidthAttr: an <img>'s width and height attributes size it as
// the Chromium backend does (its themes set img { max-width: 100%; height:
// auto } and honour a height attribute without a width one): pixels at 96
// dpi, a percentage of the column, beside a width the height following
// the image's aspect whatever the height attribute says, never wider than
// the column; a lone height sets the height, the width following, and a
// column too narrow for that width narrows the image but keeps its
// height, as Chromium does. Measured on the page with pdftoppm.
func TestImageWidthAttr(t *testing.T) {
	needTool(t, "pdftoppm")
	r := newRenderer(t, `{}`)
	src := redPNG(t, 400, 200)
	m := modernTokens.Margins
	column := func(pageW int) float64 { return float64(pageW) - m[1] - m[3] }
	for _, tc := range []struct {
		name, img string
		wantW     func(column float64) float64
		wantH     float64 // 0: half the width, the image's aspect
	}{
		{"none", `<img src="` + src + `">`, func(float64) float64 { return 300 }, 0},
		{"pixels", `<img src="` + src + `" width="100">`, func(float64) float64 { return 75 }, 0},
		{"px suffix", `<img src="` + src + `" width="100px">`, func(float64) float64 { return 75 }, 0},
		{"with height", `<img src="` + src + `" width="100" height="100">`, func(float64) float64 { return 75 }, 0},
		{"height alone", `<img src="` + src + `" height="50">`, func(float64) float64 { return 75 }, 0},
		{"height alone, too wide", `<img src="` + src + `" height="600">`, func(c float64) float64 { return c }, 450},
		{"height with a bad width", `<img src="` + src + `" width="wide" height="50">`, func(float64) float64 { return 300 }, 0},
		{"height percent", `<img src="` + src + `" height="50%">`, func(float64) float64 { return 300 }, 0},
		{"percent", `<img src="` + src + `" width="50%">`, func(c float64) float64 { return c / 2 }, 0},
		{"wider than the column", `<img src="` + src + `" width="2000">`, func(c float64) float64 { return c }, 0},
		{"garbage", `<img src="` + src + `" width="wide">`, func(float64) float64 { return 300 }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := renderPDF(t, r, req{doc: markdownDoc(t, tc.img+"\n"), tokens: modernTokens})
			x0, y0, x1, y1, pageW, ok := redInk(t, resp.PDF)
			if !ok {
				t.Fatal("the image is not on the page")
			}
			w, h := float64(x1-x0), float64(y1-y0)
			want := tc.wantW(column(pageW))
			wantH := tc.wantH
			if wantH == 0 {
				wantH = want / 2
			}
			if math.Abs(w-want) > 1.5 || math.Abs(h-wantH) > 1.5 {
				t.Errorf("image %vx%v pt, want %.1fx%.1f", w, h, want, wantH)
			}
		})
	}
	// width="0" draws nothing, as in a browser, and so does a lone height="0".
	for _, attr := range []string{`width="0"`, `height="0"`} {
		resp := renderPDF(t, r, req{doc: markdownDoc(t, `Text <img src="`+src+`" `+attr+`>`+"\n"), tokens: modernTokens})
		if _, _, _, _, _, ok := redInk(t, resp.PDF); ok {
			t.Errorf("an image of %s is drawn", attr)
		}
	}
}
