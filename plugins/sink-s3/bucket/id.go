package bucket

import (
	"crypto/rand"
	"encoding/hex"
)

// idLen is the length of an id: 128 random bits as lowercase hex.
const idLen = 32

// newID returns a fresh unguessable id. The id is the capability to
// download the file, so it comes from crypto/rand.
func newID() string {
	var b [idLen / 2]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails; it crashes the program instead
	return hex.EncodeToString(b[:])
}

// validID reports whether id has exactly the shape newID produces. It is
// checked before an id comes near a path, so traversal, separators, escapes
// and case variants are rejected up front.
func validID(id string) bool {
	if len(id) != idLen {
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
