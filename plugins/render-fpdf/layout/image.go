package layout

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/url"
	"strings"
)

// Bounds on embedded images: data: URIs larger than this, or images with
// more pixels, are shown as their alt text. A decompression bomb is caught
// by its header before any pixel is decoded.
const (
	maxImageBytes  = 16 << 20
	maxImagePixels = 40_000_000
	maxImageSide   = 20_000
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
	img, err := decodeDataURI(src)
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
func decodeDataURI(src string) (Image, error) {
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
	return decodeImage(data)
}

// decodeImage sniffs and checks an image. PNGs that fpdf cannot embed as
// they are (16-bit, interlaced) are re-encoded as plain 8-bit PNG.
func decodeImage(data []byte) (Image, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Image{}, fmt.Errorf("image header: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxImageSide || cfg.Height > maxImageSide ||
		cfg.Width*cfg.Height > maxImagePixels {
		return Image{}, fmt.Errorf("image of %dx%d pixels refused", cfg.Width, cfg.Height)
	}
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
	if img.Type == PNG && !fpdfReadsPNG(data) {
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
// per sample, not interlaced (IHDR bytes 24 and 28).
func fpdfReadsPNG(data []byte) bool {
	return len(data) > 28 && data[24] <= 8 && data[28] == 0
}
