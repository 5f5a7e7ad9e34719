// Package fileid is the shape of a hosted file's id, shared by every sink:
// 128 random bits as 32 lowercase hex digits. The id is the capability to
// download the file, so it is unguessable and checked strictly before it
// comes near a path or an object key.
package fileid

import (
	"crypto/rand"
	"encoding/hex"
)

// Len is the length of an id.
const Len = 32

// New returns a fresh id from crypto/rand.
func New() string {
	var b [Len / 2]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails; it crashes the program instead
	return hex.EncodeToString(b[:])
}

// Valid reports whether id has exactly the shape New produces, so
// traversal, separators, escapes and case variants are rejected up front.
func Valid(id string) bool {
	if len(id) != Len {
		return false
	}
	for i := range len(id) {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
