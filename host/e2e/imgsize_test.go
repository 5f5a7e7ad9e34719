package e2e

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestImageSizeAttrs: an <img>'s width and height attributes size it the
// same on both backends, measured on the page with pdftoppm. A lone height
// sets the height as GitHub honours it, the width following the aspect
// (the themes' img { height: auto } made Chromium ignore it, and
// render-fpdf matched); beside a width the height follows the aspect, so
// an image max-width narrows to the column is not stretched.
func TestImageSizeAttrs(t *testing.T) {
	pdfcheck.Require(t)
	if !chromiumAvailable() {
		t.Skip("chromium not installed: nothing to compare render-fpdf with")
	}
	var b bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 400, 200))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{255, 0, 0, 255}}, image.Point{}, draw.Src)
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	src := "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
	for _, tc := range []struct {
		name, attrs string
		w, h        float64 // points; 0: the column's width (not checked, only compared)
	}{
		{"height alone", `height="50"`, 75, 37.5},
		{"height alone, wider than the column", `height="600"`, 0, 450},
		{"width and height, wider than the column", `width="2000" height="600"`, 0, -1},
		{"width and height", `width="100" height="100"`, 75, 37.5},
		{"height beside a bad width", `width="wide" height="50"`, 300, 150},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := `<img src="` + src + `" ` + tc.attrs + ">\n"
			size := map[string][2]float64{}
			for _, backend := range []string{"chrome", "fpdf"} {
				w, h, ok := redBox(t, renderCLI(t, backend, md))
				if !ok {
					t.Fatalf("%s: the image is not on the page", backend)
				}
				size[backend] = [2]float64{w, h}
				wantW, wantH := tc.w, tc.h
				if wantW == 0 {
					wantW = w
				}
				if wantH == -1 {
					wantH = w / 2 // the aspect kept
				}
				if math.Abs(w-wantW) > 1.5 || math.Abs(h-wantH) > 1.5 {
					t.Errorf("%s: image %.0fx%.0f pt, want %.1fx%.1f", backend, w, h, wantW, wantH)
				}
			}
			c, f := size["chrome"], size["fpdf"]
			if math.Abs(c[0]-f[0]) > 2 || math.Abs(c[1]-f[1]) > 2 {
				t.Errorf("chrome draws %.0fx%.0f pt, fpdf %.0fx%.0f", c[0], c[1], f[0], f[1])
			}
		})
	}
}

// renderCLI renders md with mdpress render on backend and returns the PDF.
func renderCLI(t *testing.T, backend, md string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "doc.pdf")
	cmd := exec.Command(filepath.Join(binDir, "mdpress"), "render", "-", "-o", out, "--backend", backend,
		"--plugin-dir", filepath.Join(binDir, "plugins"), "--data-dir", t.TempDir())
	cmd.Env = cleanEnv()
	cmd.Stdin = strings.NewReader(md)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("render on %s: %v\n%s", backend, err, msg)
	}
	pdf, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return pdf
}

// redBox is the size in points of the red pixels of the PDF's first page,
// rasterized at 72 dpi (a pixel a point).
func redBox(t *testing.T, pdf []byte) (w, h float64, ok bool) {
	pw, ph, px := pdfcheck.PPM(t, pdf, 1, 72)
	x0, y0, x1, y1 := pw, ph, -1, -1
	for y := range ph {
		for x := range pw {
			p := px[3*(y*pw+x):]
			if p[0] > 200 && p[1] < 60 && p[2] < 60 {
				x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			}
		}
	}
	return float64(x1 - x0 + 1), float64(y1 - y0 + 1), x1 >= 0
}
