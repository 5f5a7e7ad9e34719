package bucket

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/mdpress/mdpress/core/disposition"
)

// Object metadata keys, sent as x-amz-meta-<key>. S3 returns them
// lowercased, so they are lowercase here.
const (
	metaOwner    = "owner"
	metaFilename = "filename"
	metaCreated  = "created"
	metaExpires  = "expires"
	metaSHA256   = "sha256"
)

// meta is what an object's metadata says about the hosted file.
type meta struct {
	Owner    string
	Filename string
	Created  time.Time
	Expires  time.Time
	SHA256   string
}

// encode renders m as object metadata. Header values must be ASCII, so the
// free-text fields are percent-encoded.
func (m meta) encode() map[string]string {
	return map[string]string{
		metaOwner:    url.PathEscape(m.Owner),
		metaFilename: url.PathEscape(m.Filename),
		metaCreated:  m.Created.UTC().Format(time.RFC3339Nano),
		metaExpires:  m.Expires.UTC().Format(time.RFC3339Nano),
		metaSHA256:   m.SHA256,
	}
}

func decodeMeta(md map[string]string) (meta, error) {
	var m meta
	var err error
	if m.Expires, err = time.Parse(time.RFC3339Nano, md[metaExpires]); err != nil {
		return m, fmt.Errorf("metadata %s: %w", metaExpires, err)
	}
	if m.Created, err = time.Parse(time.RFC3339Nano, md[metaCreated]); err != nil {
		return m, fmt.Errorf("metadata %s: %w", metaCreated, err)
	}
	if m.Owner, err = url.PathUnescape(md[metaOwner]); err != nil {
		return m, fmt.Errorf("metadata %s: %w", metaOwner, err)
	}
	if m.Filename, err = url.PathUnescape(md[metaFilename]); err != nil {
		return m, fmt.Errorf("metadata %s: %w", metaFilename, err)
	}
	m.SHA256 = md[metaSHA256]
	return m, nil
}

// contentDisposition is stored on the object so that a presigned download
// saves under the document's name; inline, as the host serves its own
// downloads, so a browser shows the PDF, and in the same words.
func contentDisposition(filename string) string {
	name := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '/' || r == '\\' {
			return '_'
		}
		return r
	}, filename)
	if strings.Trim(name, ". _") == "" {
		name = disposition.Default
	}
	return disposition.Inline(name)
}
