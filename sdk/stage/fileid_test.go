package stage

import (
	"strings"
	"testing"
)

func TestValidFileID(t *testing.T) {
	for id, want := range map[string]bool{
		"0123456789abcdef0123456789abcdef":  true,
		"usr_x~2026~11~a79c.pdf":            true,
		"usr_x/2026/11/a79c":                false,
		"../../etc/passwd":                  false,
		"..":                                false,
		"":                                  false,
		"a?b":                               false,
		"a%2fb":                             false,
		strings.Repeat("a", MaxFileIDLen+1): false,
	} {
		if got := ValidFileID(id); got != want {
			t.Errorf("ValidFileID(%q) = %v, want %v", id, got, want)
		}
	}
}
