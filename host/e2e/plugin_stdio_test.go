package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestPluginStdioLogged: what a plugin writes to os.Stderr or os.Stdout
// during a call (its own debug prints, a library's messages) reaches the
// host's log, whole lines, as a line written before Serve does. go-plugin
// streams them to the host once Serve has begun, and the host dropped
// them: not even --log-level debug showed them.
func TestPluginStdioLogged(t *testing.T) {
	h := startHost(t, withArgs("--plugin-dir", rogueDir(t), "--backend", "render-rogue"), withEnv("ROGUE_MODE=stdio"))
	_, key := h.account("pro", 10)
	if resp, body := h.post(key, map[string]string{"markdown": "# Prints"}); resp.StatusCode != 200 {
		t.Fatalf("status %d: %.300s", resp.StatusCode, body)
	}
	want := []string{`msg="rogue: a line on stderr, written in two parts" plugin=render-rogue`, `msg="rogue: a line on stdout" plugin=render-rogue stream=stdout`}
	deadline := time.Now().Add(5 * time.Second)
	for {
		logs, missing := h.logs.String(), ""
		for _, w := range want {
			if !strings.Contains(logs, w) {
				missing = w
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the host's log has no %s:\n%s", missing, tail(logs, 30))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
