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

// TestImageWidthAttr: an <img>'s width attribute sizes it as the Chromium
// backend does (its themes set img { max-width: 100%; height: auto }):
// pixels at 96 dpi, a percentage of the column, the height following the
// image's aspect whatever the height attribute says, never wider than the
// column. Measured on the page with pdftoppm.
func TestImageWidthAttr(t *testing.T) {
	needTool(t, "pdftoppm")
	r := newRenderer(t, `{}`)
	src := redPNG(t, 400, 200)
	m := modernTokens.Margins
	column := func(pageW int) float64 { return float64(pageW) - m[1] - m[3] }
	for _, tc := range []struct {
		name, img string
		wantW     func(column float64) float64
	}{
		{"none", `<img src="` + src + `">`, func(float64) float64 { return 300 }},
		{"pixels", `<img src="` + src + `" width="100">`, func(float64) float64 { return 75 }},
		{"px suffix", `<img src="` + src + `" width="100px">`, func(float64) float64 { return 75 }},
		{"with height", `<img src="` + src + `" width="100" height="100">`, func(float64) float64 { return 75 }},
		{"height alone", `<img src="` + src + `" height="50">`, func(float64) float64 { return 300 }},
		{"percent", `<img src="` + src + `" width="50%">`, func(c float64) float64 { return c / 2 }},
		{"wider than the column", `<img src="` + src + `" width="2000">`, func(c float64) float64 { return c }},
		{"garbage", `<img src="` + src + `" width="wide">`, func(float64) float64 { return 300 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := renderPDF(t, r, req{doc: markdownDoc(t, tc.img+"\n"), tokens: modernTokens})
			x0, y0, x1, y1, pageW, ok := redInk(t, resp.PDF)
			if !ok {
				t.Fatal("the image is not on the page")
			}
			w, h := float64(x1-x0), float64(y1-y0)
			if want := tc.wantW(column(pageW)); math.Abs(w-want) > 1.5 || math.Abs(h-want/2) > 1.5 {
				t.Errorf("image %vx%v pt, want %.1fx%.1f", w, h, want, want/2)
			}
		})
	}
	// width="0" draws nothing, as in a browser.
	resp := renderPDF(t, r, req{doc: markdownDoc(t, `Text <img src="`+src+`" width="0">`+"\n"), tokens: modernTokens})
	if _, _, _, _, _, ok := redInk(t, resp.PDF); ok {
		t.Error(`an image of width="0" is drawn`)
	}
}
