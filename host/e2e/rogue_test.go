package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// rogueDir is a plugin directory holding the built-in plugins and the rogue
// test plugin as render-rogue and sink-rogue, as an operator who adds a
// third-party plugin has.
func rogueDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(filepath.Join(binDir, "plugins"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(binDir, "plugins", e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "render-rogue")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/rogue").CombinedOutput(); err != nil {
		t.Fatalf("build rogue: %v\n%s", err, out)
	}
	if err := os.Link(bin, filepath.Join(dir, "sink-rogue")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRoguePluginAnswers: a third-party plugin's wrong answer is a 500
// with a safe message and no charge, and the log says which stage broke
// how; before, a renderer's garbage went out as a charged 200 PDF, a sink's
// id with a / as a charged URL that was a 404 forever, and a plugin's
// megabyte-long error message went to the client whole.
func TestRoguePluginAnswers(t *testing.T) {
	dir := rogueDir(t)
	tests := []struct {
		name    string
		args    []string
		mode    string
		output  string
		status  int
		wantLog string
	}{
		{"render not a pdf", []string{"--backend", "render-rogue"}, "", "binary", 500, "the renderer returned 17 bytes that are not a PDF"},
		{"render empty", []string{"--backend", "render-rogue"}, "empty", "binary", 500, "the renderer returned an empty PDF"},
		{"sink id with slashes", []string{"--backend", "fpdf", "--sink", "sink-rogue"}, "", "url", 500, "the sink returned the id"},
		{"long error message", []string{"--backend", "render-rogue"}, "long-error", "binary", 400, "ZZZZ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startHost(t, withArgs(append([]string{"--plugin-dir", dir}, tt.args...)...), withEnv("ROGUE_MODE="+tt.mode))
			_, key := h.account("pro", 10)
			resp, body := h.post(key, map[string]string{"markdown": "# Rogue", "output": tt.output})
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.status, body)
			}
			var e struct{ Error string }
			if err := json.Unmarshal(body, &e); err != nil || e.Error == "" || len(body) > 2048 {
				t.Fatalf("error body of %d bytes: %.300s", len(body), body)
			}
			if strings.Contains(string(body), "usr/2026") || strings.Contains(string(body), "not a pdf") {
				t.Fatalf("the plugin's internals reached the client: %s", body)
			}
			_, info := h.do("GET", "/v1/user/info", key, nil, nil)
			if !strings.Contains(string(info), `"currentCredits":10`) {
				t.Fatalf("charged for a failed conversion: %s", info)
			}
			if logs := h.logs.String(); !strings.Contains(logs, tt.wantLog) {
				t.Fatalf("the log does not say %q:\n%s", tt.wantLog, tail(logs, 20))
			}
		})
	}
}
