package render

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

// flatPNG is an 8-bit PNG of w×h pixels of one value, of colour type ct
// (2 RGB, 6 RGBA), written row by row so that a picture of tens of
// millions of pixels costs the test no more than its compressed bytes:
// such an image is the bomb a hostile document sends, 150 KB for 6000x6000.
func flatPNG(t testing.TB, w, h int, ct, value byte) []byte {
	t.Helper()
	chunk := func(out []byte, kind string, data []byte) []byte {
		out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
		out = append(out, kind...)
		out = append(out, data...)
		return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(append([]byte(kind), data...)))
	}
	samples := map[byte]int{2: 3, 6: 4}[ct]
	row := bytes.Repeat([]byte{value}, 1+w*samples)
	row[0] = 0 // filter: none
	var z bytes.Buffer
	zw, err := zlib.NewWriterLevel(&z, zlib.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	for range h {
		if _, err := zw.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, 8, ct, 0, 0, 0)
	out := chunk([]byte("\x89PNG\r\n\x1a\n"), "IHDR", ihdr)
	out = chunk(out, "IDAT", z.Bytes())
	return chunk(out, "IEND", nil)
}

func imageMarkdown(alt string, png []byte) string {
	return "![" + alt + "](data:image/png;base64," + base64.StdEncoding.EncodeToString(png) + ")\n\n"
}

// renderPeak renders Markdown and returns the render, its peak live heap
// and the text pdftotext finds in it.
func renderPeak(t *testing.T, md string) (*stage.RenderResponse, int, string) {
	t.Helper()
	r := newRenderer(t, `{}`)
	q := &stage.RenderRequest{Document: markdownDoc(t, md), Tokens: modernTokens, Page: a4(t), Numbering: stage.NumberingNone}
	runtime.GC()
	peak := 0
	stop := plugintest.SamplePeakHeap(&peak)
	resp, err := r.Render(context.Background(), q)
	stop()
	if err != nil {
		t.Fatal(err)
	}
	return resp, peak, pdfText(t, resp.PDF)
}

// TestAlphaPNGBomb: fpdf embeds a PNG with an alpha channel by inflating
// it whole and copying its colour and alpha apart, three times its pixels'
// bytes on top of the decoding that checks it. A 6000x6000 RGBA PNG of
// 150 KB took the plugin to 820 MB; it is now refused from its header
// (alt text), while the same picture without alpha, which fpdf embeds as
// it is, still draws.
func TestAlphaPNGBomb(t *testing.T) {
	const heapBound = 300 << 20
	resp, peak, text := renderPeak(t, imageMarkdown("RGBA bomb", flatPNG(t, 6000, 6000, 6, 0x7f)))
	t.Logf("RGBA 6000x6000: peak heap %d MiB, PDF %d KB", peak>>20, len(resp.PDF)>>10)
	if peak > heapBound {
		t.Errorf("peak heap %d MiB for one image, want under %d MiB", peak>>20, heapBound>>20)
	}
	if !strings.Contains(text, "RGBA bomb") {
		t.Errorf("the refused image is not shown as its alt text: %q", text)
	}
	resp, _, text = renderPeak(t, imageMarkdown("RGB picture", flatPNG(t, 6000, 6000, 2, 0x7f)))
	if strings.Contains(text, "RGB picture") || len(resp.PDF) < 100<<10 {
		t.Errorf("the RGB image of the same size was not drawn (PDF %d KB, text %q)", len(resp.PDF)>>10, text)
	}
}

// TestDocumentImagePixels: the distinct images of a document share one
// budget of pixels, so a request of many small-compressed large images
// cannot take the plugin to tens of seconds and a gigabyte (60 RGB PNGs of
// 36 million pixels in a 10 MB request took 17 s and 1 GB). Four images of
// 25 million pixels fit the 100 million; the fifth is its alt text.
func TestDocumentImagePixels(t *testing.T) {
	var md strings.Builder
	for i := range 5 {
		md.WriteString(imageMarkdown("picture"+string(rune('A'+i)), flatPNG(t, 5000, 5000, 2, byte(i))))
	}
	_, _, text := renderPeak(t, md.String())
	for i := range 4 {
		if alt := "picture" + string(rune('A'+i)); strings.Contains(text, alt) {
			t.Errorf("%s, within the budget, was not drawn", alt)
		}
	}
	if !strings.Contains(text, "pictureE") {
		t.Errorf("the fifth image, past 100 million pixels, was drawn; text %q", text)
	}
}

// TestBlockImageFollowsAlign: <p align="center"><img ...></p> is how a
// README centres its logo; the image too large to sit in a line must be
// centred (or pushed right) like the text of its paragraph, as a browser
// does. The image's ink is found on the page with pdftoppm.
func TestBlockImageFollowsAlign(t *testing.T) {
	needTool(t, "pdftoppm")
	r := newRenderer(t, `{}`)
	img := image.NewRGBA(image.Rect(0, 0, 200, 80))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{255, 0, 0, 255}}, image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	src := "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
	m := modernTokens.Margins
	for _, tc := range []struct {
		name, md string
		want     func(pageW, imgW float64) float64 // left edge, in points
	}{
		{"markdown", "![logo](" + src + ")\n", func(_, _ float64) float64 { return m[3] }},
		{"left", `<p align="left"><img src="` + src + `" alt="logo"></p>` + "\n", func(_, _ float64) float64 { return m[3] }},
		{"center", `<p align="center"><img src="` + src + `" alt="logo"></p>` + "\n",
			func(w, iw float64) float64 { return m[3] + (w-m[1]-m[3]-iw)/2 }},
		{"center-tag", `<center><img src="` + src + `" alt="logo"></center>` + "\n",
			func(w, iw float64) float64 { return m[3] + (w-m[1]-m[3]-iw)/2 }},
		{"right", `<div align="right"><img src="` + src + `" alt="logo"></div>` + "\n",
			func(w, iw float64) float64 { return w - m[1] - iw }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := renderPDF(t, r, req{doc: markdownDoc(t, tc.md), tokens: modernTokens})
			w, h, px := rasterRGB(t, resp.PDF, 72) // a pixel a point
			x0, x1 := w, -1
			for y := range h {
				for x := range w {
					p := px[3*(y*w+x):]
					if p[0] > 200 && p[1] < 60 && p[2] < 60 {
						x0, x1 = min(x0, x), max(x1, x)
					}
				}
			}
			if x1 < 0 {
				t.Fatal("the image is not on the page")
			}
			imgW := float64(x1 - x0 + 1)
			if math.Abs(imgW-150) > 2 { // 200 px at 96 dpi
				t.Errorf("image %v pt wide, want 150", imgW)
			}
			if want := tc.want(float64(w), 150); math.Abs(float64(x0)-want) > 2 {
				t.Errorf("image starts at x=%d pt, want %.1f", x0, want)
			}
		})
	}
}
