package bucket

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
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
	metaOwnerDigest = "owner-digest"
	metaFilename    = "filename"
	metaCreated     = "created"
	metaExpires     = "expires"
	metaSHA256      = "sha256"
	// metaLegacyOwner is the account id in clear, as objects stored before
	// owner-digest carry it; read, never written.
	metaLegacyOwner = "owner"
)

// meta is what an object's metadata says about the hosted file.
type meta struct {
	// OwnerDigest stands for the owner: S3 returns every x-amz-meta-*
	// header to whoever holds a presigned URL, and the account id there
	// told each recipient of a PDF which account made it, the same for all
	// of that account's PDFs.
	OwnerDigest string
	// LegacyOwner is the owner in clear of an object stored before.
	LegacyOwner string
	Filename    string
	Created     time.Time
	Expires     time.Time
	SHA256      string
}

// ownerDigest stands for owner on the object of file id. The id goes in so
// that one account's files carry different digests, which no one holding
// several of its URLs can match up; an operator who knows the account
// still checks each object with ownedBy.
func ownerDigest(id, owner string) string {
	sum := sha256.Sum256([]byte("mdpress-owner\x00" + id + "\x00" + owner))
	return hex.EncodeToString(sum[:])
}

// ownedBy reports whether the object of file id, described by m, was
// stored for owner, whether it names the owner by digest or, stored
// before the digest, in clear.
func (m meta) ownedBy(id, owner string) bool {
	if m.OwnerDigest == "" {
		return m.LegacyOwner != "" && m.LegacyOwner == owner
	}
	return subtle.ConstantTimeCompare([]byte(m.OwnerDigest), []byte(ownerDigest(id, owner))) == 1
}

// encode renders m as object metadata. Header values must be ASCII, so the
// free-text fields are percent-encoded.
func (m meta) encode() map[string]string {
	return map[string]string{
		metaOwnerDigest: m.OwnerDigest,
		metaFilename:    url.PathEscape(m.Filename),
		metaCreated:     m.Created.UTC().Format(time.RFC3339Nano),
		metaExpires:     m.Expires.UTC().Format(time.RFC3339Nano),
		metaSHA256:      m.SHA256,
	}
}

func decodeMeta(md map[string]string) (meta, error) {
	m := meta{OwnerDigest: md[metaOwnerDigest]}
	var err error
	if m.Expires, err = time.Parse(time.RFC3339Nano, md[metaExpires]); err != nil {
		return m, fmt.Errorf("metadata %s: %w", metaExpires, err)
	}
	if m.Created, err = time.Parse(time.RFC3339Nano, md[metaCreated]); err != nil {
		return m, fmt.Errorf("metadata %s: %w", metaCreated, err)
	}
	if m.LegacyOwner, err = url.PathUnescape(md[metaLegacyOwner]); err != nil {
		return m, fmt.Errorf("metadata %s: %w", metaLegacyOwner, err)
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
