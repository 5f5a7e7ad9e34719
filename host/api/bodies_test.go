package api

import (
	"io"
	"strings"
	"testing"
)

// TestHeldBodies reads bodies against a shared bound: what fits is read
// and held until given back, a read past the bound fails as busy and
// holds nothing more.
func TestHeldBodies(t *testing.T) {
	b := &bodies{max: 10}
	first := &heldBody{ReadCloser: io.NopCloser(strings.NewReader("123456")), b: b}
	if got, err := io.ReadAll(first); err != nil || string(got) != "123456" {
		t.Fatalf("first body: %q, %v", got, err)
	}
	second := &heldBody{ReadCloser: io.NopCloser(strings.NewReader("abcdef")), b: b}
	if _, err := io.ReadAll(second); !isBodiesFull(err) {
		t.Fatalf("second body past the bound: %v, want busy", err)
	}
	if b.used.Load() != first.held+second.held || first.held != 6 {
		t.Fatalf("held %d, first %d, second %d", b.used.Load(), first.held, second.held)
	}
	b.give(first.held)
	b.give(second.held)
	third := &heldBody{ReadCloser: io.NopCloser(strings.NewReader("abcdefghij")), b: b}
	if got, err := io.ReadAll(third); err != nil || len(got) != 10 {
		t.Fatalf("a body that fits once the others are given back: %q, %v", got, err)
	}
}
