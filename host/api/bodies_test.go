package api

import (
	"io"
	"log/slog"
	"net/http/httptest"
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

// TestBodyHeldUntilReleased: decoding a conversion keeps its body counted
// against the bound; only the handler, once it has answered, gives it back.
// A request waiting for a slot holds its Markdown, and the bound is there
// for exactly that wait.
func TestBodyHeldUntilReleased(t *testing.T) {
	s := &Server{opt: Options{MaxBodyBytes: 1 << 20}, bodies: &bodies{max: 1 << 20}, log: slog.New(slog.DiscardHandler)}
	body := `{"markdown":"` + strings.Repeat("x", 100000) + `"}`
	r := httptest.NewRequest("POST", "/v1/pdf/markdown", strings.NewReader(body))
	held := &heldBody{ReadCloser: r.Body, b: s.bodies}
	if _, _, err := s.decodeConversion(httptest.NewRecorder(), r, held); err != nil {
		t.Fatal(err)
	}
	if used := s.bodies.used.Load(); used != int64(len(body)) {
		t.Fatalf("%d bytes held after decoding a body of %d", used, len(body))
	}
	held.release()
	if used := s.bodies.used.Load(); used != 0 {
		t.Fatalf("%d bytes held after the release", used)
	}
}
