package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinksToHeadingsInAnyScript: a document's links to its own sections
// are followable in the PDF on every backend, whatever the script of the
// heading, by the ids GitHub gives headings (what a README's links are
// written against). The parser dropped every character beyond ASCII from
// an id and made "_" a "-": "#café-crème", "#כותרת" and "#my_func" led
// nowhere.
func TestLinksToHeadingsInAnyScript(t *testing.T) {
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf not installed")
	}
	const md = "[a](#café-crème) [b](#כותרת) [c](#my_func) [d](#nowhere)\n\n# Café crème\n\n# כותרת\n\n# my_func()\n"
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "links.pdf")
			cmd := exec.Command(filepath.Join(binDir, "mdpress"), "render", "-", "-o", out, "--backend", backend,
				"--plugin-dir", filepath.Join(binDir, "plugins"), "--data-dir", t.TempDir())
			cmd.Env = cleanEnv()
			cmd.Stdin = strings.NewReader(md)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("render: %v\n%s", err, msg)
			}
			if n := internalLinks(t, out); n != 3 {
				t.Errorf("%d links to a place in the document, want 3 (a, b, c; #nowhere names no heading)", n)
			}
		})
	}
}

// internalLinks counts the link annotations of the PDF at path that go to
// a destination in the document, direct objects or not.
func internalLinks(t *testing.T, path string) int {
	t.Helper()
	raw, err := exec.Command("qpdf", "--json", path).Output()
	if err != nil {
		t.Fatalf("qpdf --json: %v", err)
	}
	var doc struct {
		QPDF []map[string]any `json:"qpdf"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.QPDF) < 2 {
		t.Fatalf("qpdf --json: %v", err)
	}
	n := 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["/Subtype"] == "/Link" {
				if _, ok := v["/Dest"]; ok {
					n++
				} else if a, ok := v["/A"].(map[string]any); ok && a["/S"] == "/GoTo" {
					n++
				}
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc.QPDF[1])
	return n
}
