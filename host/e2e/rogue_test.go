package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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
	for _, name := range []string{"sink-rogue", "auth-rogue"} {
		if err := os.Link(bin, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
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

// TestPluginPanicFailsOneCall: a panic in one call of a plugin fails that
// call (500, not charged) and no other: a render in flight on the same
// plugin at the time finishes, and the plugin serves on, not relaunched.
// Before, the panic took the process down with every call in flight on it.
func TestPluginPanicFailsOneCall(t *testing.T) {
	dir := rogueDir(t)
	h := startHost(t, withArgs("--plugin-dir", dir, "--backend", "render-rogue"), withEnv("ROGUE_MODE=panic"))
	_, key := h.account("pro", 10)
	pid := h.plugin("render-rogue")
	slow := make(chan int, 1)
	go func() {
		resp, _ := h.post(key, map[string]string{"markdown": "# Slow"})
		slow <- resp.StatusCode
	}()
	time.Sleep(500 * time.Millisecond) // the slow render is under way
	resp, body := h.post(key, map[string]string{"markdown": "# Boom"})
	if resp.StatusCode != 500 {
		t.Fatalf("the panicking call: status %d, want 500: %.300s", resp.StatusCode, body)
	}
	if code := <-slow; code != 200 {
		t.Fatalf("the call in flight beside the panic: status %d, want 200", code)
	}
	if resp, body := h.post(key, map[string]string{"markdown": "# Fine"}); resp.StatusCode != 200 {
		t.Fatalf("after the panic: status %d: %.300s", resp.StatusCode, body)
	}
	if !alive(pid) {
		t.Fatal("the plugin process died of the panic")
	}
	if got := scrape(t, h)[`mdpress_plugin_restarts_total{plugin="render-rogue"}`]; got != 0 {
		t.Fatalf("render-rogue restarted %v times", got)
	}
	_, info := h.do("GET", "/v1/user/info", key, nil, nil)
	if !strings.Contains(string(info), `"currentCredits":8`) {
		t.Fatalf("want two charges, for the two PDFs made: %s", info)
	}
	if logs := h.logs.String(); !strings.Contains(logs, "rogue: a bug tripped") {
		t.Fatalf("the log does not show the panic:\n%s", tail(logs, 20))
	}
}

// TestAuthFailureLogNamesStage: an auth plugin's internal failure is a 500
// whose log line names the auth stage, as a pipeline stage's does; it said
// only err="internal error".
func TestAuthFailureLogNamesStage(t *testing.T) {
	dir := rogueDir(t)
	base, err := os.ReadFile(filepath.Join("..", "..", "configs", "mdpress.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rogue := strings.Replace(string(base), "plugin: auth-apikey", "plugin: auth-rogue", 1)
	if rogue == string(base) {
		t.Fatal("configs/mdpress.yaml names no auth-apikey plugin")
	}
	cfg := filepath.Join(t.TempDir(), "mdpress.yaml")
	if err := os.WriteFile(cfg, []byte(rogue), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startHost(t, withArgs("--config", cfg, "--plugin-dir", dir, "--backend", "fpdf"))
	resp, body := h.post("mdp_whatever", map[string]string{"markdown": "# Hi"})
	if resp.StatusCode != 500 || strings.Contains(string(body), "key store") {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	want := regexp.MustCompile(`level=ERROR msg="request failed" .* err="auth: internal error"`)
	for deadline := time.Now().Add(5 * time.Second); !want.MatchString(h.logs.String()); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s in the host's log:\n%s", want, tail(h.logs.String(), 30))
		}
	}
}
