package chrome

import (
	"crypto/sha256"
	"html"
	"strconv"
	"strings"
	"unicode/utf8"
)

// scanDataImages measures every data: image written anywhere in a
// document's text, before Chromium sees it. checkImages sees only what the
// loaded document used on screen; an image that only printing uses (a
// print-only rule, an element shown only in print, an @page background) is
// loaded and decoded at once when the page prints, after that check. The
// text is read as written, with CSS escapes undone (as in a <style>), and
// with character references and then CSS escapes undone (as in a style
// attribute), so that an escaped "data:" is found too; tabs and newlines
// are dropped, as a URL parser drops them. What a data: URL that is not a
// measurable image holds (an SVG image, a style sheet) is read the same
// way, two levels deep. The bounds on one image apply, and the document's
// on all of them, each distinct image counted once: an image written in a
// rule nothing uses counts too, which only errs high. What cannot be
// measured is left to checkImages and the memory watchdog. The scan reads
// each byte of the text a few times at most: a 10 MB document takes tens
// of milliseconds, one without "data:" a few.
func scanDataImages(doc string) error {
	s := scan{seen: map[[sha256.Size]byte]bool{}}
	return s.text(doc, 0)
}

// maxScanDepth bounds the data: URLs read inside data: URLs.
const maxScanDepth = 2

// scan is one document's: the distinct images found, and their pixels.
type scan struct {
	seen  map[[sha256.Size]byte]bool
	total int64
}

func (s *scan) text(text string, depth int) error {
	variants := []string{text}
	if strings.Contains(text, `\`) {
		variants = append(variants, cssUnescape(text))
	}
	if strings.Contains(text, "&") {
		variants = append(variants, cssUnescape(html.UnescapeString(text)))
	}
	for i, v := range variants {
		// A URL parser drops every tab and newline in a URL, so
		// "da\tta:" in an attribute is a data: URL.
		if strings.ContainsAny(v, "\t\n\r") {
			variants[i] = strings.Map(dropTabsNewlines, v)
		}
	}
	for _, v := range variants {
		if err := s.variant(v, depth); err != nil {
			return err
		}
	}
	return nil
}

// variant measures the data: images of text. A URL ends where its
// context ends it: at the quote that opened it, at the ")" of an unquoted
// url(), at a space otherwise. When that leaves a header that cannot be
// read (a quote that was a character reference, a space before a srcset
// descriptor), the URL is read again to the next space or ">", within
// retryBytes a URL and twice the text's length in all, so that the scan
// stays linear whatever text holds.
func (s *scan) variant(text string, depth int) error {
	lower := asciiLower(text)
	retries := 2 * len(text)
	for at := 0; ; {
		i := strings.Index(lower[at:], "data:")
		if i < 0 {
			return nil
		}
		start := at + i
		end := urlEnd(text, start)
		at = end
		data, ok, cut := payload(text[start:end])
		if cut && retries > 0 {
			if other := loneEnd(text, start, retryBytes); other != end {
				retries -= other - start
				if data, ok, _ = payload(text[start:other]); ok {
					at = max(at, other)
				}
			}
		}
		if !ok {
			continue
		}
		cfg, format, err := imageSize(data)
		if err != nil {
			// Not an image Go can measure: an SVG image, a style sheet
			// (@import, <link>), or a format checkImages decides on; what
			// it writes is read the same way.
			if depth < maxScanDepth {
				if err := s.text(string(data), depth+1); err != nil {
					return err
				}
			}
			continue
		}
		if err := overBounds(cfg, format); err != nil {
			return err
		}
		if sum := sha256.Sum256(data); !s.seen[sum] {
			s.seen[sum] = true
			if s.total += int64(cfg.Width) * int64(cfg.Height); s.total > maxDocumentPixels {
				return tooManyPixels()
			}
		}
	}
}

// retryBytes bounds how far a URL is read again past its context's end.
const retryBytes = 1 << 20

// payload decodes a data: URL's payload. ok reports that it holds an
// image header or text to read further; cut, that the URL may have been
// ended too early: its base64 does not decode, or its image has no header
// to read.
func payload(raw string) (data []byte, ok, cut bool) {
	d, err := parseDataURL(raw)
	if err != nil {
		return nil, false, false
	}
	data, err = d.bytes()
	if err != nil {
		return nil, false, true
	}
	if len(data) == 0 {
		return nil, false, false
	}
	if _, _, err := imageSize(data); err != nil && strings.HasPrefix(d.mediaType, "image/") && d.mediaType != "image/svg+xml" {
		return data, false, true
	}
	return data, true, false
}

// urlEnd returns where the URL starting at start ends, by what comes
// before it.
func urlEnd(text string, start int) int {
	before := strings.TrimRight(text[:start], " ")
	stops := " \"'<>`)"
	if n := len(before); n > 0 {
		switch before[n-1] {
		case '"', '\'':
			stops = before[n-1:]
		case '(':
			stops = " \"')"
		}
	}
	if n := strings.IndexAny(text[start:], stops); n >= 0 {
		return start + n
	}
	return len(text)
}

// loneEnd returns where a URL starting at start would end at the next
// space or ">", at most max bytes on.
func loneEnd(text string, start, max int) int {
	end := min(len(text), start+max)
	if n := strings.IndexAny(text[start:end], " >"); n >= 0 {
		return start + n
	}
	return end
}

// cssUnescape undoes CSS escapes: a backslash and one to six hex digits
// (and one whitespace after them) is that code point, a backslash before
// a newline is nothing, and one before any other character is that
// character.
func cssUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		j := i + 1
		for j < len(s) && j < i+7 && isHex(s[j]) {
			j++
		}
		if j > i+1 {
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			r := rune(n)
			if n == 0 || n > utf8.MaxRune || (0xD800 <= n && n <= 0xDFFF) {
				r = utf8.RuneError
			}
			b.WriteRune(r)
			if j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r' || s[j] == '\f') {
				j++
			}
			i = j - 1
			continue
		}
		if s[j] != '\n' {
			b.WriteByte(s[j])
		}
		i = j
	}
	return b.String()
}

func dropTabsNewlines(r rune) rune {
	if r == '\t' || r == '\n' || r == '\r' {
		return -1
	}
	return r
}

// asciiLower lowers ASCII letters only, so that byte offsets match s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
