package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/config"
	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestFlagChoosesThirdPartyPlugin: a config file that keeps the built-in
// sink and renderer and sets up a plugin of the operator's own under
// plugins.<name> lets --sink and --backend choose that plugin, as their
// environment twins do. The flags were applied after the file was
// validated, so the file was refused ("plugins.sink-rogue: no stage runs
// a plugin of that name") for the flag that would have run it, while
// MDPRESS_SINK=sink-rogue served. The other way round, a flag choosing a
// built-in over the file's own plugin keeps that plugin's settings valid.
func TestFlagChoosesThirdPartyPlugin(t *testing.T) {
	dir := rogueDir(t)
	t.Run("serve --sink", func(t *testing.T) {
		conf := writeConfig(t, func(c *config.Config) { c.Plugins["sink-rogue"] = map[string]any{} })
		h := startHost(t, conf, withArgs("--plugin-dir", dir, "--backend", "fpdf", "--sink", "sink-rogue"))
		// The log reaches the buffer through a pipe: the line may come a
		// moment after /readyz has answered (a CI run under load).
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(h.logs.String(), "sink=sink-rogue"); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("serve did not run sink-rogue:\n%s", tail(h.logs.String(), 20))
			}
		}
	})
	t.Run("a built-in over the file's own", func(t *testing.T) {
		// The file runs render-rogue, with its settings; --backend fpdf
		// runs the built-in for once, which left plugins.render-rogue to
		// no stage, and the file was refused.
		pdfcheck.Require(t)
		conf := writeConfig(t, func(c *config.Config) {
			c.Render.Plugin = "render-rogue"
			c.Plugins["render-rogue"] = map[string]any{}
		})
		work := t.TempDir()
		in := filepath.Join(work, "notes.md")
		if err := os.WriteFile(in, []byte("# Notes\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runMdpress(t, envOf(conf), "render", in, "--backend", "fpdf", "--plugin-dir", dir, "--data-dir", work)
		if r.code != 0 || !strings.Contains(r.stdout, "(render-fpdf)") {
			t.Fatalf("render --backend fpdf over render.plugin: render-rogue: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		// A block no stage runs, and the file does not either, is still
		// the typo it most often is.
		typo := writeConfig(t, func(c *config.Config) { c.Plugins["render-rouge"] = map[string]any{} })
		if r := runMdpress(t, envOf(typo), "render", in, "--backend", "fpdf", "--plugin-dir", dir, "--data-dir", work); r.code != 1 ||
			!strings.Contains(r.stderr, "plugins.render-rouge: no stage runs a plugin of that name") || strings.Contains(r.stderr, "auto") {
			t.Fatalf("plugins.render-rouge: exit %d\n%s", r.code, r.stderr)
		}
	})
	t.Run("render --backend", func(t *testing.T) {
		pdfcheck.Require(t)
		conf := writeConfig(t, func(c *config.Config) { c.Plugins["render-rogue"] = map[string]any{} })
		work := t.TempDir()
		in := filepath.Join(work, "notes.md")
		if err := os.WriteFile(in, []byte("# Notes\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(work, "notes.pdf")
		r := runMdpress(t, envOf(conf), "render", in, "-o", out, "--backend", "render-rogue", "--plugin-dir", dir, "--data-dir", work)
		// The rogue renderer answers what is not a PDF: refused by the
		// pipeline, which it reached only once the config was accepted.
		if strings.Contains(r.stderr, "no stage runs a plugin") {
			t.Fatalf("render --backend render-rogue: the config was refused: %s", r.stderr)
		}
		if !strings.Contains(r.stderr, "not a PDF") {
			t.Fatalf("render --backend render-rogue: exit %d, want the rogue renderer's answer refused:\n%s", r.code, r.stderr)
		}
	})
}
