package accounts

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"
)

// KeyPrefix starts every API key, so leaked keys are easy to recognise and
// scanners can match them.
const KeyPrefix = "mdp_"

// keyBytes of randomness: 256 bits cannot be guessed, which is what lets the
// store keep a plain SHA-256 of the key instead of a slow password hash.
const keyBytes = 32

// b32 is lowercase RFC 4648 base32 without padding: no characters that need
// escaping, and a double click selects the whole key.
var b32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

var keyLen = len(KeyPrefix) + b32.EncodedLen(keyBytes)

// newKey returns a fresh API key.
func newKey() string {
	return KeyPrefix + randomText(keyBytes)
}

// wellFormedKey reports whether s could be a key this store issued, so
// garbage is turned away without a database round trip.
func wellFormedKey(s string) bool {
	if len(s) != keyLen || !strings.HasPrefix(s, KeyPrefix) {
		return false
	}
	for _, c := range s[len(KeyPrefix):] {
		if !('a' <= c && c <= 'z' || '2' <= c && c <= '7') {
			return false
		}
	}
	return true
}

// hashKey is what the store keeps and looks keys up by.
func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// newID returns prefix followed by 128 random bits.
func newID(prefix string) string { return prefix + randomText(16) }

func randomText(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails: crypto/rand panics rather than return short
	return b32.EncodeToString(b)
}
