package chrome

import (
	"encoding/binary"
	"errors"
)

// avifSize reads the size of an AVIF still image: the largest of the image
// spatial extents ('ispe') its item properties declare, which errs high
// when tiles or an alpha plane declare their own. A file that declares
// none, an image sequence without a still item among them, is not
// measured.
func avifSize(data []byte) (w, h int, ok bool, err error) {
	if !isAVIF(data) {
		return 0, 0, false, nil
	}
	errBad := errors.New("avif: no image size in the header")
	meta, found := findBox(data, "meta")
	if !found || len(meta) < 4 {
		return 0, 0, true, errBad
	}
	iprp, found := findBox(meta[4:], "iprp") // meta is a full box
	if !found {
		return 0, 0, true, errBad
	}
	ipco, found := findBox(iprp, "ipco")
	if !found {
		return 0, 0, true, errBad
	}
	seen := false
	for box := range boxes(ipco) {
		if box.kind != "ispe" || len(box.body) < 12 {
			continue
		}
		seen = true
		w = max(w, int(binary.BigEndian.Uint32(box.body[4:8])))
		h = max(h, int(binary.BigEndian.Uint32(box.body[8:12])))
	}
	if !seen {
		return 0, 0, true, errBad
	}
	return w, h, true, nil
}

// isAVIF reports whether data starts with a file type box naming AVIF.
func isAVIF(data []byte) bool {
	ftyp, ok := firstBox(data)
	if !ok || ftyp.kind != "ftyp" || len(ftyp.body) < 8 {
		return false
	}
	brands := append([]byte{}, ftyp.body[:4]...) // the major brand, then the compatible ones
	brands = append(brands, ftyp.body[8:]...)
	for i := 0; i+4 <= len(brands); i += 4 {
		if b := string(brands[i : i+4]); b == "avif" || b == "avis" {
			return true
		}
	}
	return false
}

// box is one ISO base media file format box: its four-letter type and
// what follows its header.
type box struct {
	kind string
	body []byte
}

// boxes yields the boxes of data in order, and stops at the first whose
// size does not fit.
func boxes(data []byte) func(yield func(box) bool) {
	return func(yield func(box) bool) {
		for len(data) >= 8 {
			size, header := uint64(binary.BigEndian.Uint32(data)), uint64(8)
			switch size {
			case 0: // to the end
				size = uint64(len(data))
			case 1: // a 64-bit size follows the type
				if len(data) < 16 {
					return
				}
				size, header = binary.BigEndian.Uint64(data[8:]), 16
			}
			if size < header || size > uint64(len(data)) {
				return
			}
			if !yield(box{kind: string(data[4:8]), body: data[header:size]}) {
				return
			}
			data = data[size:]
		}
	}
}

func firstBox(data []byte) (box, bool) {
	for b := range boxes(data) {
		return b, true
	}
	return box{}, false
}

func findBox(data []byte, kind string) ([]byte, bool) {
	for b := range boxes(data) {
		if b.kind == kind {
			return b.body, true
		}
	}
	return nil, false
}
