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

// variant measures the data: images of text. A URL runs to the first
// quote, bracket or parenthesis, so each byte is read once whatever text
// holds.
func (s *scan) variant(text string, depth int) error {
	lower := asciiLower(text)
	for at := 0; ; {
		i := strings.Index(lower[at:], "data:")
		if i < 0 {
			return nil
		}
		start, end := at+i, len(text)
		if n := strings.IndexAny(text[at+i:], "\"'()<>`"); n >= 0 {
			end = start + n
		}
		at = end
		d, err := parseDataURL(text[start:end])
		if err != nil {
			continue
		}
		data, err := d.bytes()
		if cut := strings.IndexAny(d.payload, " \f"); err != nil && cut >= 0 {
			// A srcset candidate's URL ends at a space, before its
			// descriptor ("1x").
			d.payload = d.payload[:cut]
			data, err = d.bytes()
		}
		if err != nil || len(data) == 0 {
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
