package layout

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	imgcolor "image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/url"
	"strings"
)

// Bounds on embedded images: data: URIs larger than this, images with more
// pixels, or whose decoding would hold more bytes, are shown as their alt
// text. A decompression bomb is caught by its header before any pixel is
// decoded. A progressive JPEG is decoded once per scan over the whole
// image, and Go's decoder cannot be interrupted, so one with more scans
// than any encoder writes (libjpeg's default script has 10) is refused too.
const (
	maxImageBytes   = 16 << 20
	maxImagePixels  = 40_000_000
	maxImageSide    = 20_000
	maxDecodedBytes = 200 << 20
	maxJPEGScans    = 64
	// maxDocumentPixels bounds the pixels of a document's distinct images
	// together (render-chrome's bound): each is decoded once to be checked
	// and fpdf inflates the PNGs again, so 60 images of 36 million pixels,
	// 150 KB each in a 10 MB request, took 17 s and 1 GB; past it, alt
	// text.
	maxDocumentPixels = 100_000_000
)

type imageRef struct {
	index int
	w, h  int
	err   error
}

// loadImage decodes a data: URI image once per document.
func (e *engine) loadImage(src string) (imageRef, bool) {
	src = strings.TrimSpace(src)
	if !strings.HasPrefix(strings.ToLower(src), "data:") {
		return imageRef{}, false
	}
	if ref, ok := e.images[src]; ok {
		return ref, ref.err == nil
	}
	if e.ctx.Err() != nil {
		return imageRef{}, false // out of time: the layout stops at its next check
	}
	img, err := decodeDataURI(src, &e.pixelsLeft)
	ref := imageRef{err: err}
	if err == nil {
		ref.index, ref.w, ref.h = len(e.doc.Images), img.Width, img.Height
		e.doc.Images = append(e.doc.Images, img)
	} else {
		e.log.Debug("image dropped", "err", err)
	}
	e.images[src] = ref
	return ref, err == nil
}

// decodeDataURI parses data:[<media type>][;base64],<data> and validates the
// image fully, so that the painter never meets bytes it cannot embed.
func decodeDataURI(src string, pixelsLeft *int64) (Image, error) {
	if len(src) > maxImageBytes*4/3+256 {
		return Image{}, errors.New("data URI too large")
	}
	meta, payload, ok := strings.Cut(src[len("data:"):], ",")
	if !ok {
		return Image{}, errors.New("data URI without a comma")
	}
	var data []byte
	if strings.HasSuffix(strings.ToLower(meta), ";base64") {
		clean := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
				return -1
			}
			return r
		}, payload)
		if u, err := url.PathUnescape(clean); err == nil {
			clean = u
		}
		var err error
		clean = strings.TrimRight(clean, "=")
		if data, err = base64.RawStdEncoding.DecodeString(clean); err != nil {
			if data, err = base64.RawURLEncoding.DecodeString(clean); err != nil {
				return Image{}, fmt.Errorf("base64: %w", err)
			}
		}
	} else {
		u, err := url.PathUnescape(payload)
		if err != nil {
			return Image{}, fmt.Errorf("percent-encoding: %w", err)
		}
		data = []byte(u)
	}
	if len(data) > maxImageBytes {
		return Image{}, errors.New("image too large")
	}
	return decodeImageWithin(data, pixelsLeft)
}

// decodeImage sniffs and checks an image. PNGs that fpdf cannot embed as
// they are (16-bit, interlaced) are re-encoded as plain 8-bit PNG.
func decodeImage(data []byte) (Image, error) {
	left := int64(maxDocumentPixels)
	return decodeImageWithin(data, &left)
}

// decodeImageWithin is decodeImage that takes the image's pixels from a
// document's budget of pixels left before decoding it, whether or not the
// decoding then succeeds: a truncated image costs its decoding too.
func decodeImageWithin(data []byte, pixelsLeft *int64) (Image, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Image{}, fmt.Errorf("image header: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxImageSide || cfg.Height > maxImageSide ||
		cfg.Width*cfg.Height > maxImagePixels {
		return Image{}, fmt.Errorf("image of %dx%d pixels refused", cfg.Width, cfg.Height)
	}
	if int64(cfg.Width)*int64(cfg.Height) > *pixelsLeft {
		return Image{}, fmt.Errorf("image of %dx%d pixels refused: the document's images pass %d pixels in all",
			cfg.Width, cfg.Height, int64(maxDocumentPixels))
	}
	progressive, scans := false, 0
	if format == "jpeg" {
		if progressive, scans = jpegScans(data); scans > maxJPEGScans {
			return Image{}, fmt.Errorf("progressive JPEG of %d scans refused", scans)
		}
	}
	reencode := format == "png" && !fpdfReadsPNG(data)
	alpha := format == "png" && (reencode || pngHasAlpha(data))
	if n := decodedBytes(cfg, reencode, progressive, alpha); n > maxDecodedBytes {
		return Image{}, fmt.Errorf("image of %dx%d pixels refused: decoding it holds %d MB", cfg.Width, cfg.Height, n>>20)
	}
	*pixelsLeft -= int64(cfg.Width) * int64(cfg.Height)
	img := Image{Data: data, Width: cfg.Width, Height: cfg.Height}
	var decoded image.Image
	switch format {
	case "png":
		img.Type = PNG
		decoded, err = png.Decode(bytes.NewReader(data))
	case "jpeg":
		img.Type = JPEG
		decoded, err = jpeg.Decode(bytes.NewReader(data))
	case "gif":
		img.Type = GIF
		decoded, err = gif.Decode(bytes.NewReader(data))
	default:
		return Image{}, fmt.Errorf("unsupported image format %q", format)
	}
	if err != nil {
		return Image{}, fmt.Errorf("decode %s: %w", format, err)
	}
	if reencode {
		var buf bytes.Buffer
		rgba := image.NewNRGBA(decoded.Bounds())
		draw.Draw(rgba, rgba.Bounds(), decoded, decoded.Bounds().Min, draw.Src)
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		if err := enc.Encode(&buf, rgba); err != nil {
			return Image{}, fmt.Errorf("re-encode png: %w", err)
		}
		img.Data = buf.Bytes()
	}
	return img, nil
}

// fpdfReadsPNG reports whether fpdf embeds the PNG as is: at most 8 bits
// per sample, not interlaced (IHDR bytes 24 and 28), and no empty chunk
// before IEND, where fpdf stops reading (a valid PNG may hold an empty IDAT,
// and fpdf would then embed the image data cut short).
func fpdfReadsPNG(data []byte) bool {
	if len(data) <= 28 || data[24] > 8 || data[28] != 0 {
		return false
	}
	for at := 8; at+8 <= len(data); {
		n := int(binary.BigEndian.Uint32(data[at:]))
		kind := string(data[at+4 : at+8])
		if kind == "IEND" {
			return true
		}
		if n == 0 || n > len(data) {
			return false
		}
		at += 12 + n
	}
	return false
}

// pngHasAlpha reports whether a PNG's colour type (IHDR byte 25) carries
// an alpha channel: grey or RGB with alpha.
func pngHasAlpha(data []byte) bool {
	return len(data) > 25 && (data[25] == 4 || data[25] == 6)
}

// decodedBytes is about what decoding and embedding the image hold in
// memory: its pixels as Go decodes them, a copy where a PNG is re-encoded,
// a progressive JPEG's coefficients (two bytes a sample) until its last
// scan, and fpdf's split of a PNG's alpha channel. fpdf inflates such a PNG
// whole into a buffer that grows by doubling, then copies its colour and
// its alpha into two more: three times its 8-bit samples (a 6000x6000 RGBA
// PNG of 150 KB took the plugin to 820 MB).
func decodedBytes(cfg image.Config, reencode, progressive, alpha bool) int64 {
	pixels := int64(cfg.Width) * int64(cfg.Height)
	samples := int64(4)
	switch cfg.ColorModel {
	case imgcolor.GrayModel:
		samples = 1
	case imgcolor.Gray16Model:
		samples = 2
	case imgcolor.RGBA64Model, imgcolor.NRGBA64Model:
		samples = 8
	case imgcolor.YCbCrModel:
		samples = 3
	}
	n := pixels * samples
	if reencode {
		n += pixels * 4 // the 8-bit copy
	}
	if progressive {
		n += pixels * samples * 2
	}
	if alpha {
		n += 3 * pixels * min(samples, 4) // fpdf splits the 8-bit samples (re-encoded if 16-bit)
	}
	return n
}

// jpegScans walks a JPEG's markers: whether it is progressive (SOF2), and
// how many scans (SOS) it holds.
func jpegScans(data []byte) (progressive bool, scans int) {
	at := 2 // after SOI
	for at+4 <= len(data) {
		if data[at] != 0xFF {
			at++
			continue
		}
		marker := data[at+1]
		switch {
		case marker == 0xFF || marker == 0x00 || marker >= 0xD0 && marker <= 0xD7:
			at++ // fill byte, stuffed zero, restart marker
			continue
		case marker == 0xD9: // EOI
			return progressive, scans
		case marker == 0xC2:
			progressive = true
		case marker == 0xDA:
			scans++
		}
		// A segment's length follows its marker; after SOS, the entropy-
		// coded data runs to the next marker, which the loop finds.
		at += 2 + int(binary.BigEndian.Uint16(data[at+2:]))
	}
	return progressive, scans
}
