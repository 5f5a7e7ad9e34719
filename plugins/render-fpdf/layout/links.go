package layout

import (
	"net/url"
	"strings"
)

// maxHref bounds the URIs written into link annotations.
const maxHref = 4096

// fragment returns the anchor name of a "#name" link, percent-decoded.
func fragment(href string) (string, bool) {
	name, ok := strings.CutPrefix(href, "#")
	if !ok || name == "" {
		return "", false
	}
	if u, err := url.PathUnescape(name); err == nil {
		name = u
	}
	return name, true
}

// followable reports whether a link's target is something a PDF reader can
// open: web and mail links. Relative paths mean nothing outside the
// repository a README came from, and javascript:, file: and data: links are
// not written into a document served to others.
func followable(href string) bool {
	if len(href) > maxHref {
		return false
	}
	u, err := url.Parse(href)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "ftp":
		return u.Host != ""
	case "mailto", "tel":
		return u.Opaque != "" || u.Path != ""
	}
	return false
}
