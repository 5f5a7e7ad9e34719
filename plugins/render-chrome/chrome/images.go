package chrome

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // registered for image.DecodeConfig
	_ "image/jpeg"
	_ "image/png"
	"strings"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/webp"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Bounds on the images a document carries in data: URLs. Chromium loads
// those itself, without a request Fetch interception could see, and
// decodes each image whole when it prints, at four bytes a pixel and more:
// a 1.5 MB PNG of 20000x20000 pixels held 4 GB of the browser's memory for
// 30 s. The images are loaded, and their headers known, by the time the
// document is, and none is decoded before it is printed, so the tab
// measures them between the two. The bounds on one image are render-fpdf's
// (plugins/render-fpdf/layout/image.go), so that an image too big for one
// backend is too big for the other.
const (
	maxImagePixels = 40_000_000
	maxImageSide   = 20_000
	// maxDocumentPixels bounds the data: images of one document together:
	// 400 MB of decoded pixels, which cost the browser about a gigabyte,
	// in a browser bounded at 1.5 GB between renders.
	maxDocumentPixels = 100_000_000
)

// checkImages measures the data: images of a loaded document (the
// resources of its frames) and returns a too-large stage error when one
// of them, or all of them together, pass the bounds. The resources are
// Chromium's memory cache, so an image drawn many times counts once, as it
// is decoded once. found reports whether the document holds any.
func checkImages(tree *page.FrameResourceTree) (found bool, err error) {
	var total int64
	var walk func(*page.FrameResourceTree) error
	walk = func(t *page.FrameResourceTree) error {
		resources := t.Resources
		if t.Frame != nil {
			// A frame whose document is an image.
			resources = append(resources[:len(resources):len(resources)],
				&page.FrameResource{URL: t.Frame.URL, Type: network.ResourceTypeDocument})
		}
		for _, res := range resources {
			n, img, err := dataImagePixels(res)
			found = found || img
			if err != nil {
				return err
			}
			if total += n; total > maxDocumentPixels {
				return tooManyPixels()
			}
		}
		for _, child := range t.ChildFrames {
			if err := walk(child); err != nil {
				return err
			}
		}
		return nil
	}
	return found, walk(tree)
}

// dataImagePixels returns the pixels decoding res holds, and whether it is
// a data: image at all. An image whose size cannot be read (ICO, an AVIF
// sequence, a broken one) is refused: Chromium may decode what Go cannot,
// and its cost is unknown.
func dataImagePixels(res *page.FrameResource) (pixels int64, isData bool, err error) {
	if len(res.URL) < len("data:") || !strings.EqualFold(res.URL[:len("data:")], "data:") {
		return 0, false, nil
	}
	d, err := parseDataURL(res.URL)
	if err != nil || !isImage(res.Type, d.mediaType) {
		return 0, false, nil // not an image Chromium can decode
	}
	data, err := d.bytes()
	if err != nil || len(data) == 0 {
		// A payload Chromium cannot read either, or "data:,", a common
		// empty placeholder.
		return 0, true, nil
	}
	cfg, format, err := imageSize(data)
	if err != nil {
		return 0, true, stage.Wrap(stage.CodeInvalid, err,
			"an image in the document is broken or in a format whose size cannot be checked (PNG, JPEG, GIF, WebP, BMP and AVIF can)")
	}
	if err := overBounds(cfg, format); err != nil {
		return 0, true, err
	}
	return int64(cfg.Width) * int64(cfg.Height), true, nil
}

// holdsDataURLs reports whether a frame tree holds a data: resource.
func holdsDataURLs(t *page.FrameResourceTree) bool {
	if t == nil {
		return false
	}
	for _, res := range t.Resources {
		if len(res.URL) >= len("data:") && strings.EqualFold(res.URL[:len("data:")], "data:") {
			return true
		}
	}
	for _, child := range t.ChildFrames {
		if holdsDataURLs(child) {
			return true
		}
	}
	return false
}

// tooManyPixels refuses a document whose images together pass the bound.
func tooManyPixels() error {
	return tooLarge(fmt.Sprintf("the document's images have more than %d pixels in all", maxDocumentPixels),
		fmt.Sprintf("%d pixels of images", maxDocumentPixels))
}

// overBounds refuses an image over the bounds on one image.
func overBounds(cfg image.Config, format string) error {
	w, h := int64(cfg.Width), int64(cfg.Height)
	if w > maxImageSide || h > maxImageSide || w*h > maxImagePixels {
		return tooLarge(fmt.Sprintf("an image of %dx%d pixels (%s) is over the limit of %d pixels, %d a side", w, h, format, maxImagePixels, maxImageSide),
			fmt.Sprintf("%d pixels an image", maxImagePixels))
	}
	return nil
}

func tooLarge(msg, limit string) error {
	err := stage.Errorf(stage.CodeTooLarge, "%s", msg)
	err.Details = map[string]string{"limit": limit}
	return err
}

// isImage reports whether Chromium decodes a resource into a bitmap. An
// image element sniffs its bytes whatever the media type says, so the
// resource type counts as much as the media type. An SVG is drawn at its
// layout size, not decoded into a bitmap of its own; the data: images
// inside one are loaded by the SVG's own document, which the resource
// tree does not show, and only the memory watchdog bounds them.
func isImage(typ network.ResourceType, mediaType string) bool {
	if mediaType == "image/svg+xml" {
		return false
	}
	return typ == network.ResourceTypeImage || strings.HasPrefix(mediaType, "image/")
}

// imageSize reads an image's size from its header.
func imageSize(data []byte) (image.Config, string, error) {
	if w, h, ok, err := avifSize(data); ok {
		return image.Config{Width: w, Height: h}, "avif", err
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return cfg, format, fmt.Errorf("image header: %w", err)
	}
	if format == "gif" {
		// Chromium's GIF decoder grows the image to hold its frames; Go's
		// header reader gives the logical screen only.
		if cfg.Width, cfg.Height, err = gifBounds(data, cfg.Width, cfg.Height); err != nil {
			return cfg, format, err
		}
	}
	return cfg, format, nil
}

// dataURL is a data: URL as Chromium reads it: a media type (lower case,
// without parameters), then a payload that is percent-decoded and, when
// ";base64" ends the header, decoded with ASCII whitespace and trailing
// padding ignored.
type dataURL struct {
	mediaType string
	base64    bool
	payload   string
}

func parseDataURL(raw string) (dataURL, error) {
	if len(raw) < len("data:") || !strings.EqualFold(raw[:len("data:")], "data:") {
		return dataURL{}, errors.New("not a data: URL")
	}
	header, payload, ok := strings.Cut(raw[len("data:"):], ",")
	if !ok {
		return dataURL{}, errors.New("data: URL without a comma")
	}
	d := dataURL{payload: payload}
	header = strings.TrimRight(header, " ")
	if i := strings.LastIndexByte(header, ';'); i >= 0 && strings.EqualFold(strings.TrimLeft(header[i+1:], " "), "base64") {
		d.base64, header = true, header[:i]
	}
	d.mediaType, _, _ = strings.Cut(header, ";")
	d.mediaType = strings.ToLower(strings.TrimSpace(d.mediaType))
	return d, nil
}

// bytes decodes the payload.
func (d dataURL) bytes() ([]byte, error) {
	body := percentDecode(d.payload)
	if !d.base64 {
		return body, nil
	}
	body = bytes.TrimRight(stripSpace(body), "=")
	data := make([]byte, base64.RawStdEncoding.DecodedLen(len(body)))
	n, err := base64.RawStdEncoding.Decode(data, body)
	if err != nil {
		return nil, fmt.Errorf("base64: %w", err)
	}
	return data[:n], nil
}

// percentDecode decodes %XX escapes and leaves a '%' that starts none, as
// a URL parser does, where url.PathUnescape would fail.
func percentDecode(s string) []byte {
	if !strings.Contains(s, "%") {
		return []byte(s)
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			out = append(out, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		out = append(out, s[i])
	}
	return out
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// stripSpace removes the ASCII whitespace forgiving base64 ignores.
func stripSpace(b []byte) []byte {
	return bytes.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\n', '\f', '\r':
			return -1
		}
		return r
	}, b)
}

// gifBounds returns the logical screen w x h grown to hold every frame.
func gifBounds(data []byte, w, h int) (int, int, error) {
	errBad := errors.New("gif: malformed")
	if len(data) < 13 {
		return 0, 0, errBad
	}
	at := 13
	if data[10]&0x80 != 0 { // global colour table
		at += 3 << (data[10]&7 + 1)
	}
	// skipBlocks skips data sub-blocks up to and past their terminator.
	skipBlocks := func() bool {
		for at < len(data) {
			n := int(data[at])
			at += 1 + n
			if n == 0 {
				return true
			}
		}
		return false
	}
	for at < len(data) {
		switch data[at] {
		case 0x3b: // trailer
			return w, h, nil
		case 0x21: // extension: label, then sub-blocks
			at += 2
			if !skipBlocks() {
				return 0, 0, errBad
			}
		case 0x2c: // image descriptor
			if at+10 > len(data) {
				return 0, 0, errBad
			}
			d := data[at:]
			left, top := int(d[1])|int(d[2])<<8, int(d[3])|int(d[4])<<8
			fw, fh := int(d[5])|int(d[6])<<8, int(d[7])|int(d[8])<<8
			w, h = max(w, left+fw), max(h, top+fh)
			at += 10
			if d[9]&0x80 != 0 { // local colour table
				at += 3 << (d[9]&7 + 1)
			}
			at++ // LZW minimum code size
			if !skipBlocks() {
				return 0, 0, errBad
			}
		default:
			return 0, 0, errBad
		}
	}
	return w, h, nil // no trailer: Chromium draws what came
}
