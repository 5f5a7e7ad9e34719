package e2e

import (
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
			n := 0
			for _, l := range pdfLinks(t, out) {
				if l.destPage > 0 {
					n++
				}
			}
			if n != 3 {
				t.Errorf("%d links to a place in the document, want 3 (a, b, c; #nowhere names no heading)", n)
			}
		})
	}
}
