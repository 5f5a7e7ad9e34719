// Package disposition writes the Content-Disposition of a hosted PDF, the
// same whether the host serves the file or a store serves it from a
// presigned URL.
package disposition

import (
	"mime"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Default is the name of a file whose own name cannot be used.
const Default = "document.pdf"

// Inline is an inline Content-Disposition naming filename. A name beyond
// ASCII goes out twice, as RFC 6266 asks: RFC 8187-encoded in filename*,
// which browsers and wget read, and as an ASCII approximation in filename,
// which the clients that ignore filename* read (curl -OJ saved "Über.pdf"
// under the URL's last segment, the file id, with no .pdf).
func Inline(filename string) string {
	if filename == "" {
		filename = Default
	}
	ascii := approximate(filename)
	v := mime.FormatMediaType("inline", map[string]string{"filename": ascii})
	if v == "" {
		return `inline; filename="` + Default + `"`
	}
	if ascii == filename {
		return v
	}
	// FormatMediaType encodes a name beyond ASCII as filename* alone.
	if enc := mime.FormatMediaType("inline", map[string]string{"filename": filename}); strings.HasPrefix(enc, "inline; filename*=") {
		v += strings.TrimPrefix(enc, "inline")
	}
	return v
}

// approximate is filename in printable ASCII: accents dropped ("Ü" is
// "U"), any other character beyond ASCII an underscore, and Default
// when no letter or digit is left.
func approximate(filename string) string {
	var b strings.Builder
	underscore := false
	for _, r := range norm.NFD.String(filename) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
			underscore = false
		case !underscore:
			b.WriteByte('_')
			underscore = true
		}
	}
	stem := strings.TrimSuffix(b.String(), ".pdf")
	if !strings.ContainsFunc(stem, func(r rune) bool {
		return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}) {
		return Default
	}
	return b.String()
}
