package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// corpusDir holds the project's sample documents (small, medium and large
// Markdown), committed with the render-fpdf tests; the e2e tests read
// them from the repository so that they run the same on every checkout.
var corpusDir = filepath.Join("..", "..", "plugins", "render-fpdf", "render", "testdata")

// corpus returns the committed sample document name ("small.md",
// "medium.md", "large.md"). It is part of the repository: a missing file
// is a broken checkout, not a reason to skip.
func corpus(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, name))
	if err != nil {
		t.Fatalf("sample document: %v", err)
	}
	return string(b)
}
