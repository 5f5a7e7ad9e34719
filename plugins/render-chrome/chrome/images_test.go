package chrome

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/sdk/stage"
)

// pngHeader is a PNG of w x h RGBA pixels whose data holds one row: its
// header is all Chromium needs to allocate the whole image, and it costs
// nothing to make. Chromium held 4 GB for one of 20000x20000.
func pngHeader(w, h int) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	chunk("IHDR", ihdr)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write(make([]byte, 1+4*w))
	_ = zw.Close()
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	return b.Bytes()
}

// gifBigFrame is a GIF of a 1x1 logical screen whose one frame is w x h.
func gifBigFrame(w, h int) []byte {
	b := []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00")
	b = append(b, 0x2c, 0, 0, 0, 0, byte(w), byte(w>>8), byte(h), byte(h>>8), 0)
	b = append(b, 2, 2, 0x4c, 0x01, 0, 0x3b) // LZW code size, one sub-block, terminator, trailer
	return b
}

// webpLossless is the header of a lossless WebP of w x h pixels.
func webpLossless(w, h int) []byte {
	bits := uint32(w-1) | uint32(h-1)<<14
	vp8l := []byte{0x2f, byte(bits), byte(bits >> 8), byte(bits >> 16), byte(bits >> 24), 0, 0, 0}
	b := []byte("RIFF\x00\x00\x00\x00WEBPVP8L")
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vp8l)))
	b = append(b, vp8l...)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-8))
	return b
}

// avifHeader is the start of an AVIF file whose item properties declare
// each of sizes, with major brand major and avif among the compatible
// brands; the image data does not matter to a size check.
func avifHeader(major string, sizes ...[2]int) []byte {
	mkbox := func(kind string, body ...[]byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, 0)
		b = append(b, kind...)
		for _, p := range body {
			b = append(b, p...)
		}
		binary.BigEndian.PutUint32(b, uint32(len(b)))
		return b
	}
	var props [][]byte
	for _, sz := range sizes {
		ispe := binary.BigEndian.AppendUint32(make([]byte, 4), uint32(sz[0])) // version and flags, then width
		props = append(props, mkbox("ispe", binary.BigEndian.AppendUint32(ispe, uint32(sz[1]))))
	}
	ftyp := mkbox("ftyp", []byte(major), make([]byte, 4), []byte("mif1avifmiaf"))
	meta := mkbox("meta", make([]byte, 4), mkbox("hdlr", make([]byte, 24)), mkbox("iprp", mkbox("ipco", props...)))
	return append(append(ftyp, meta...), mkbox("mdat", make([]byte, 16))...)
}

func TestAVIFSizeMalformed(t *testing.T) {
	good := avifHeader("avif", [2]int{10, 20})
	if w, h, ok, err := avifSize(good); !ok || err != nil || w != 10 || h != 20 {
		t.Fatalf("avifSize = %d, %d, %v, %v; want 10, 20", w, h, ok, err)
	}
	// Every truncation of a good header, and sizes that lie, end without
	// a size or a panic.
	for n := range len(good) {
		if _, _, ok, err := avifSize(good[:n]); ok && err == nil && n < len(good)-24 {
			t.Errorf("truncated to %d bytes: measured", n)
		}
	}
	for _, size := range []uint32{0, 1, 7, 0xffffffff} {
		bad := slices.Clone(good)
		binary.BigEndian.PutUint32(bad[28:], size) // the meta box's size, after the 28-byte ftyp
		_, _, _, _ = avifSize(bad)
	}
	if _, _, ok, _ := avifSize(pngHeader(1, 1)); ok {
		t.Error("a PNG taken for AVIF")
	}
}

func solidPNG(t testing.TB, w, h int, c color.Color) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func dataURI(mediaType string, data []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

func TestCheckImages(t *testing.T) {
	var smallGIF bytes.Buffer
	_ = gif.Encode(&smallGIF, image.NewPaletted(image.Rect(0, 0, 3, 2), color.Palette{color.Black}), nil)
	sixK := func(i int) *page.FrameResource { // 36 M pixels, under the bound alone
		return &page.FrameResource{URL: dataURI("image/png", pngHeader(6000, 6000)) + strings.Repeat("=", i), Type: network.ResourceTypeImage}
	}
	img := func(url string) *page.FrameResource {
		return &page.FrameResource{URL: url, Type: network.ResourceTypeImage}
	}
	tests := []struct {
		name string
		tree *page.FrameResourceTree
		want stage.Code // 0: passes
	}{
		{"small png", &page.FrameResourceTree{Resources: []*page.FrameResource{img(dataURI("image/png", pngHeader(640, 480)))}}, 0},
		{"small gif", &page.FrameResourceTree{Resources: []*page.FrameResource{img(dataURI("image/gif", smallGIF.Bytes()))}}, 0},
		{"small webp", &page.FrameResourceTree{Resources: []*page.FrameResource{img(dataURI("image/webp", webpLossless(100, 100)))}}, 0},
		{"empty placeholder", &page.FrameResourceTree{Resources: []*page.FrameResource{img("data:,")}}, 0},
		{"remote image", &page.FrameResourceTree{Resources: []*page.FrameResource{img("https://example.com/big.png")}}, 0},
		{"stylesheet", &page.FrameResourceTree{Resources: []*page.FrameResource{{URL: "data:text/css,p{}", Type: network.ResourceTypeStylesheet}}}, 0},
		{"svg", &page.FrameResourceTree{Resources: []*page.FrameResource{img("data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg'/>")}}, 0},
		{"unreadable base64", &page.FrameResourceTree{Resources: []*page.FrameResource{img("data:image/png;base64,%%%")}}, 0},
		{"percent-encoded png", &page.FrameResourceTree{Resources: []*page.FrameResource{img("data:image/png," + percentAll(pngHeader(20000, 20000)))}}, stage.CodeTooLarge},
		{"base64 with spaces", &page.FrameResourceTree{Resources: []*page.FrameResource{img("data:image/png; BASE64 ," + spaced(base64.StdEncoding.EncodeToString(pngHeader(20000, 20000))))}}, stage.CodeTooLarge},
		{"png bomb", &page.FrameResourceTree{Resources: []*page.FrameResource{img(dataURI("image/png", pngHeader(20000, 20000)))}}, stage.CodeTooLarge},
		{"png side", &page.FrameResourceTree{Resources: []*page.FrameResource{img(dataURI("image/png", pngHeader(20001, 1)))}}, stage.CodeTooLarge},
		{"png as text", &page.FrameResourceTree{Resources: []*page.FrameResource{img(dataURI("text/plain", pngHeader(20000, 20000)))}}, stage.CodeTooLarge},
		{"gif frame past its screen", &page.FrameResourceTree{Resources: []*page.FrameResource{img(dataURI("image/gif", gifBigFrame(20000, 20000)))}}, stage.CodeTooLarge},
		{"webp bomb", &page.FrameResourceTree{Resources: []*page.FrameResource{img(dataURI("image/webp", webpLossless(16384, 16384)))}}, stage.CodeTooLarge},
		{"avif without a size", &page.FrameResourceTree{Resources: []*page.FrameResource{img(dataURI("image/avif", []byte("\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf")))}}, stage.CodeInvalid},
		{"small avif", &page.FrameResourceTree{Resources: []*page.FrameResource{img(dataURI("image/avif", avifHeader("avif", [2]int{640, 480})))}}, 0},
		{"avif bomb", &page.FrameResourceTree{Resources: []*page.FrameResource{img(dataURI("image/avif", avifHeader("mif1", [2]int{64, 64}, [2]int{20000, 20000})))}}, stage.CodeTooLarge},
		{"avif as png", &page.FrameResourceTree{Resources: []*page.FrameResource{img(dataURI("image/png", avifHeader("avif", [2]int{20000, 20000})))}}, stage.CodeTooLarge},
		{"ico", &page.FrameResourceTree{Resources: []*page.FrameResource{img(dataURI("image/x-icon", []byte("\x00\x00\x01\x00\x01\x00\x00\x00")))}}, stage.CodeInvalid},
		{"two under the document bound", &page.FrameResourceTree{Resources: []*page.FrameResource{sixK(0), sixK(1)}}, 0},
		{"three over the document bound", &page.FrameResourceTree{Resources: []*page.FrameResource{sixK(0), sixK(1), sixK(2)}}, stage.CodeTooLarge},
		{"image in a child frame", &page.FrameResourceTree{ChildFrames: []*page.FrameResourceTree{
			{Frame: &cdp.Frame{URL: "about:srcdoc"}, Resources: []*page.FrameResource{img(dataURI("image/png", pngHeader(20000, 20000)))}},
		}}, stage.CodeTooLarge},
		{"frame of an image", &page.FrameResourceTree{ChildFrames: []*page.FrameResourceTree{
			{Frame: &cdp.Frame{URL: dataURI("image/png", pngHeader(20000, 20000))}},
		}}, stage.CodeTooLarge},
		{"the document counts its frames", &page.FrameResourceTree{Resources: []*page.FrameResource{sixK(0), sixK(1)}, ChildFrames: []*page.FrameResourceTree{
			{Frame: &cdp.Frame{URL: "about:srcdoc"}, Resources: []*page.FrameResource{sixK(2)}},
		}}, stage.CodeTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := checkImages(tt.tree)
			if tt.want == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if code := stage.CodeOf(err); code != tt.want {
				t.Fatalf("err %v (code %v), want code %v", err, code, tt.want)
			}
			if strings.Contains(err.Error(), "base64") && len(err.Error()) > 300 {
				t.Fatalf("the error carries the payload: %.300s", err)
			}
		})
	}
}

func percentAll(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		s.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
	}
	return s.String()
}

func spaced(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i += 8 {
		b.WriteString(s[i:min(i+8, len(s))] + "\n ")
	}
	return b.String() + "=="
}

// peakRSS samples the browser's memory every 20 ms until stop is closed.
func peakRSS(p *process, stop <-chan struct{}) <-chan int64 {
	out := make(chan int64, 1)
	go func() {
		var peak int64
		for {
			if rss, err := p.rss(); err == nil && rss > peak {
				peak = rss
			}
			select {
			case <-stop:
				out <- peak
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return out
}

// TestImageBombRefused: a document with a data: PNG of 20000x20000 pixels
// (1 KB here; 1.5 MB with every row) is refused before Chromium prints,
// which is when it would decode the image into gigabytes; the browser
// does not grow meanwhile, and the tab serves the next document.
func TestImageBombRefused(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, `{"tabs":1}`)
	p := currentProc(t, r)
	before, err := p.rss()
	if err != nil {
		t.Fatal(err)
	}
	bomb := dataURI("image/png", pngHeader(20000, 20000))
	a4, _ := papers.Lookup("A4")
	for _, body := range []string{
		`<p>x</p><img src="` + bomb + `">`,
		`<p>x</p><div style="width: 10px; height: 10px; background-image: url('` + bomb + `')"></div>`,
		// Used only when printing, after the load the resource check
		// reads: scanDataImages finds them in the text.
		`<style>@media print { .b { background-image: url(` + bomb + `) } }</style><p>x</p><div class="b" style="width: 10px; height: 10px"></div>`,
		`<style>@page { background: url("` + bomb + `") }</style><p>x</p>`,
		`<p>x</p><img src="` + dataURI("image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><image width="10" height="10" href="`+bomb+`"/></svg>`)) + `">`,
	} {
		stop := make(chan struct{})
		peak := peakRSS(p, stop)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		start := time.Now()
		_, err := r.Render(ctx, &stage.RenderRequest{HTML: doc{body: body}.html(), Page: a4})
		cancel()
		close(stop)
		took := time.Since(start)
		if code := stage.CodeOf(err); code != stage.CodeTooLarge {
			t.Fatalf("render: %v (code %v), want too large", err, code)
		}
		top := <-peak
		if grew := (top - before) >> 20; grew > 256 {
			t.Errorf("the browser grew by %d MB", grew)
		}
		t.Logf("idle %d MB, peak %d MB, refused after %v", before>>20, top>>20, took.Round(time.Millisecond))
		if took > 3*time.Second {
			t.Errorf("the refusal took %v", took)
		}
	}
	render(t, r, doc{body: "<p>next</p>"})
	if s := r.Stats(); s.Launches != 1 || s.TabsRecycled != 0 {
		t.Errorf("stats %+v: want the browser and its tab still serving", s)
	}
}

// TestSmallDataImagesDrawn: images under the bounds are drawn, whatever
// their format, and so are SVGs.
func TestSmallDataImagesDrawn(t *testing.T) {
	t.Parallel()
	r := sharedRenderer(t)
	red := solidPNG(t, 60, 60, color.NRGBA{R: 255, A: 255})
	svg := `<svg xmlns='http://www.w3.org/2000/svg' width='60' height='60'><rect width='60' height='60' fill='%2300c000'/></svg>`
	var body strings.Builder
	body.WriteString(`<img style="width: 200pt" src="` + dataURI("image/png", red) + `">`)
	body.WriteString(`<img style="width: 200pt" src="data:image/svg+xml,` + svg + `">`)
	// A real AVIF (avifenc), measured from its item properties.
	avif, err := os.ReadFile("testdata/blue-48x32.avif")
	if err != nil {
		t.Fatal(err)
	}
	if w, h, ok, err := avifSize(avif); !ok || err != nil || w != 48 || h != 32 {
		t.Fatalf("avifSize of a 48x32 AVIF: %d, %d, %v, %v", w, h, ok, err)
	}
	body.WriteString(`<img style="width: 200pt" src="` + dataURI("image/avif", avif) + `">`)
	res := render(t, r, doc{body: body.String()})
	if n := countPixels(t, res.PDF, isRed); n < 1000 {
		t.Errorf("%d red pixels: the PNG was not drawn", n)
	}
	if n := countPixels(t, res.PDF, isGreen); n < 1000 {
		t.Errorf("%d green pixels: the SVG was not drawn", n)
	}
	if n := countPixels(t, res.PDF, isBlue); n < 1000 {
		t.Errorf("%d blue pixels: the AVIF was not drawn", n)
	}
}

func isBlue(r, g, b byte) bool { return b > 200 && r < 80 && g < 80 }

// TestPrintedImagesDoNotCountForTheNext: images only printing loads stay
// among the tab's resources; the next document on the tab, maybe another
// account's, is not refused for them.
func TestPrintedImagesDoNotCountForTheNext(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, `{"tabs":1}`)
	six := func(i byte) string { // 36M pixels: under the bound on one image
		return dataURI("image/png", append(pngHeader(6000, 6000), i))
	}
	first := `<style>@media print { .a { background: url(` + six(1) + `) } .b { background: url(` + six(2) + `) } }</style>` +
		`<div class="a" style="width: 10px; height: 10px"></div><div class="b" style="width: 10px; height: 10px"></div>`
	render(t, r, doc{body: first})
	// With the first document's two images, this one's would pass the
	// bound on all of them (108M pixels).
	render(t, r, doc{body: `<p>next</p><img style="width: 10px" src="` + six(3) + `">`})
}
