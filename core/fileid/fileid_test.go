package fileid

import "testing"

func TestNewIsValidAndUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := New()
		if !Valid(id) || seen[id] {
			t.Fatalf("New() = %q: invalid or repeated", id)
		}
		seen[id] = true
	}
}

func TestValidRejects(t *testing.T) {
	for _, id := range []string{"", "../../etc/passwd", "0123456789abcdef0123456789abcde", "0123456789abcdef0123456789abcdef0",
		"0123456789ABCDEF0123456789abcdef", "0123456789abcdef0123456789abcde/", "%2e%2e%2f456789abcdef0123456789ab", "0123456789abcdef0123456789abcdeg"} {
		if Valid(id) {
			t.Errorf("Valid(%q) = true", id)
		}
	}
}
