package layout

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	imgcolor "image/color"
	"image/png"
	"strings"
	"testing"
)

// progressiveJPEG writes a valid progressive greyscale JPEG of side×side
// pixels: a DC scan, then scans more AC scans that hold only end-of-band
// runs. Each scan costs the decoder a pass over every block.
func progressiveJPEG(side, scans int) []byte {
	var out bytes.Buffer
	seg := func(marker byte, body []byte) {
		out.Write([]byte{0xFF, marker, byte((len(body) + 2) >> 8), byte(len(body) + 2)})
		out.Write(body)
	}
	out.Write([]byte{0xFF, 0xD8})
	q := make([]byte, 65)
	for i := 1; i < 65; i++ {
		q[i] = 1
	}
	seg(0xDB, q)
	seg(0xC2, []byte{8, byte(side >> 8), byte(side), byte(side >> 8), byte(side), 1, 1, 0x11, 0})
	dc := make([]byte, 17)
	dc[1] = 2 // two DC codes of one bit: categories 0 and 1
	seg(0xC4, append(dc, 0, 1))
	ac := make([]byte, 17)
	ac[0], ac[1] = 0x10, 2 // two AC codes of one bit: EOB run 0xE0 and EOB
	seg(0xC4, append(ac, 0xE0, 0x00))
	blocks := ((side + 7) / 8) * ((side + 7) / 8)
	var w bitWriter
	seg(0xDA, []byte{1, 1, 0x00, 0, 0, 0})
	for range blocks {
		w.put(0, 1) // DC category 0
	}
	out.Write(w.flush())
	// One AC scan: an EOB run over all blocks (blocks < 2^14 here).
	var a bitWriter
	a.put(1, 1) // code 1: EOB (run of one), repeated per block
	for range blocks - 1 {
		a.put(1, 1)
	}
	acData := a.flush()
	for range scans {
		seg(0xDA, []byte{1, 1, 0x00, 1, 63, 0})
		out.Write(acData)
	}
	out.Write([]byte{0xFF, 0xD9})
	return out.Bytes()
}

type bitWriter struct {
	buf bytes.Buffer
	acc byte
	n   uint
}

func (w *bitWriter) put(v uint32, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		w.acc = w.acc<<1 | byte(v>>uint(i))&1
		if w.n++; w.n == 8 {
			w.buf.WriteByte(w.acc)
			if w.acc == 0xFF {
				w.buf.WriteByte(0)
			}
			w.acc, w.n = 0, 0
		}
	}
}

func (w *bitWriter) flush() []byte {
	for w.n != 0 {
		w.put(1, 1)
	}
	return w.buf.Bytes()
}

// TestProgressiveJPEGScans: a JPEG with more scans than any encoder writes
// is refused before decoding (each scan is a pass over the whole image
// that cannot be interrupted); an ordinary number of scans decodes.
func TestProgressiveJPEGScans(t *testing.T) {
	if img, err := decodeImage(progressiveJPEG(64, 9)); err != nil || img.Width != 64 {
		t.Fatalf("a progressive JPEG of 10 scans: %+v, %v", img, err)
	}
	_, err := decodeImage(progressiveJPEG(64, 500))
	if err == nil || !strings.Contains(err.Error(), "501 scans") {
		t.Fatalf("a JPEG of 501 scans: %v, want it refused for its scans", err)
	}
}

// chunk is one PNG chunk with its CRC.
func chunk(kind string, data []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	out = append(out, kind...)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(append([]byte(kind), data...)))
}

// TestDecodedBytesBudget: an image is refused on what decoding it would
// hold, not on its pixel count alone: 36 million pixels of 16-bit RGBA are
// 288 MB decoded (and an 8-bit copy besides), read from a header of a few
// dozen bytes.
func TestDecodedBytesBudget(t *testing.T) {
	ihdr := binary.BigEndian.AppendUint32(nil, 6000)
	ihdr = binary.BigEndian.AppendUint32(ihdr, 6000)
	ihdr = append(ihdr, 16, 6, 0, 0, 0) // 16 bits, RGBA
	data := append([]byte("\x89PNG\r\n\x1a\n"), chunk("IHDR", ihdr)...)
	data = append(data, chunk("IEND", nil)...)
	_, err := decodeImage(data)
	if err == nil || !strings.Contains(err.Error(), "decoding it holds") {
		t.Fatalf("16-bit RGBA of 6000x6000: %v, want it refused on decoded bytes", err)
	}
}

// TestEmptyIDATReencoded: a valid PNG with an empty IDAT chunk decodes in
// Go, but fpdf stops reading at an empty chunk and would embed the image
// cut short (a broken document); such a PNG is re-encoded.
func TestEmptyIDATReencoded(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 8, 8))
	for i := range src.Pix {
		src.Pix[i] = 0x80
	}
	src.Set(1, 1, imgcolor.NRGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, src); err != nil {
		t.Fatal(err)
	}
	orig := buf.Bytes()
	at := bytes.Index(orig, []byte("IDAT")) - 4
	odd := append(append(append([]byte{}, orig[:at]...), chunk("IDAT", nil)...), orig[at:]...)
	if fpdfReadsPNG(odd) || !fpdfReadsPNG(orig) {
		t.Fatal("fpdfReadsPNG does not tell an empty chunk")
	}
	img, err := decodeImage(odd)
	if err != nil {
		t.Fatal(err)
	}
	if !fpdfReadsPNG(img.Data) {
		t.Fatal("the PNG with an empty IDAT was kept as it is")
	}
	back, err := png.Decode(bytes.NewReader(img.Data))
	if err != nil || imgcolor.NRGBAModel.Convert(back.At(1, 1)) != (imgcolor.NRGBA{R: 255, A: 255}) {
		t.Fatalf("re-encoded image: %v", err)
	}
}
