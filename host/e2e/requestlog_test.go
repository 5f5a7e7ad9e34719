package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRequestLog: every answered request leaves one log line an operator
// can find by the X-Request-Id the client quotes, saying who sent it, what
// it made and where its time went; the probes log at debug level only.
func TestRequestLog(t *testing.T) {
	h := startHost(t, withArgs("--backend", "fpdf"), withEnv("MDPRESS_LOG_FORMAT=json"))
	user, key := h.account("pro", 10)

	resp, pdf := h.post(key, map[string]string{"markdown": "# Logged\n\nOne paragraph."})
	if resp.StatusCode != 200 {
		t.Fatalf("convert: %d %s", resp.StatusCode, pdf)
	}
	line := h.requestLine(resp.Header.Get("X-Request-Id"))
	if line["level"] != "INFO" || line["client"] != "127.0.0.1" || line["method"] != "POST" || line["route"] != "/v1/pdf/markdown" || line["status"] != 200.0 {
		t.Errorf("conversion's line: %v", line)
	}
	if line["user"] != user || line["key"] == "" || line["key"] == key {
		t.Errorf("conversion's line names user %v key %v; want %s and the key's id, never the key", line["user"], line["key"], user)
	}
	if line["pages"] != 1.0 || line["bytes"] != float64(len(pdf)) {
		t.Errorf("conversion's line: pages %v bytes %v, want 1 and %d", line["pages"], line["bytes"], len(pdf))
	}
	stages, _ := line["stages"].(map[string]any)
	var sum float64
	for _, name := range []string{"auth", "meter", "parse", "render"} {
		ms, ok := stages[name].(float64)
		if !ok || ms <= 0 {
			t.Errorf("conversion's line: stage %s took %v ms, want a time (stages %v)", name, stages[name], stages)
		}
		sum += ms
	}
	if total, _ := line["ms"].(float64); total <= 0 || sum > 2*total {
		// auth and the reservation run beside the parse, so the stages
		// may add up to more than the request, not to twice it.
		t.Errorf("conversion took %v ms, its stages %v ms in all", line["ms"], sum)
	}

	// An idempotent retry says it is one: the first result again, no charge.
	for i, want := range []any{nil, true} {
		resp, body := h.do("POST", "/v1/pdf/markdown", key, map[string]string{"markdown": "# Again"}, map[string]string{"Idempotency-Key": "log-replay"})
		if resp.StatusCode != 200 {
			t.Fatalf("idempotent request %d: %d %s", i, resp.StatusCode, body)
		}
		if got := h.requestLine(resp.Header.Get("X-Request-Id"))["replayed"]; got != want {
			t.Errorf("idempotent request %d: replayed=%v in its line, want %v", i, got, want)
		}
	}

	// A key of the right form that the auth stage refuses.
	swap := "a"
	if strings.HasSuffix(key, "a") {
		swap = "b"
	}
	wrong := key[:len(key)-1] + swap
	resp, body := h.post(wrong, map[string]string{"markdown": "x"})
	if resp.StatusCode != 401 {
		t.Fatalf("bad key: %d %s", resp.StatusCode, body)
	}
	line = h.requestLine(resp.Header.Get("X-Request-Id"))
	stages, _ = line["stages"].(map[string]any)
	if line["status"] != 401.0 || line["user"] != nil {
		t.Errorf("refused key's line: %v", line)
	}
	if _, ok := stages["auth!"]; !ok {
		t.Errorf("refused key's line marks no failed check: %v", stages)
	}

	resp, _ = h.do("GET", "/healthz", "", nil, nil)
	if line := h.requestLine(resp.Header.Get("X-Request-Id")); line["level"] != "DEBUG" {
		t.Errorf("probe logged at %v, want DEBUG", line["level"])
	}
}

// TestPluginLinesCarryRequestID: what a plugin logs about a request is
// found by the X-Request-Id its client quotes, as the host's lines are: the
// cause of a 500 that only the plugin knows (sink-disk's directory, gone
// under it), a renderer's account of a document, and the meter's calls.
// The plugins were never told the id, and under load their lines could
// not be told from their neighbours'.
func TestPluginLinesCarryRequestID(t *testing.T) {
	h := startHost(t, fpdf(), withArgs("--log-level", "debug"), withEnv("MDPRESS_LOG_FORMAT=json"))
	_, key := h.account("pro", 5)

	resp, body := h.post(key, map[string]string{"markdown": "# Rendered"})
	if resp.StatusCode != 200 {
		t.Fatalf("convert: %d %s", resp.StatusCode, body)
	}
	if line := h.pluginLine("render-fpdf", "rendered", resp.Header.Get("X-Request-Id")); line["pages"] != 1.0 {
		t.Errorf("render-fpdf's line: %v", line)
	}

	if err := os.RemoveAll(filepath.Join(h.DataDir, "files")); err != nil {
		t.Fatal(err)
	}
	resp, body = h.post(key, map[string]string{"markdown": "# Hi", "output": "url"})
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	id := resp.Header.Get("X-Request-Id")
	line := h.pluginLine("sink-disk", "stage call failed", id)
	if err, _ := line["err"].(string); line["level"] != "ERROR" || !strings.Contains(err, "no such file or directory") {
		t.Errorf("sink-disk's line: %v", line)
	}
	// Calls that are no request's log none: a health check is not one.
	for _, l := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(l, `"requestId":""`) {
			t.Errorf("a line with an empty request id: %s", l)
		}
	}
}

// TestJSONLogDurations: a duration in the JSON log reads as in the text
// log and in the plugins' lines, "1.5s", not as integer nanoseconds.
func TestJSONLogDurations(t *testing.T) {
	h := startHost(t, fpdf(), withEnv("MDPRESS_LOG_FORMAT=json"))
	h.stop()
	found := map[string]bool{}
	for _, l := range strings.Split(h.logs.String(), "\n") {
		var line map[string]any
		if json.Unmarshal([]byte(l), &line) != nil {
			continue
		}
		for msg, key := range map[string]string{"plugins ready": "took", "shutting down: draining in-flight requests": "timeout"} {
			if line["msg"] != msg {
				continue
			}
			found[msg] = true
			if s, ok := line[key].(string); !ok {
				t.Errorf("%q: %s is %v, want a duration as text", msg, key, line[key])
			} else if _, err := time.ParseDuration(s); err != nil {
				t.Errorf("%q: %s: %v", msg, key, err)
			}
		}
	}
	if len(found) != 2 {
		t.Fatalf("lines found: %v\n%s", found, tail(h.logs.String(), 20))
	}
}

// pluginLine waits for a line the plugin logged with msg under request id.
func (h *host) pluginLine(plugin, msg, id string) map[string]any {
	h.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		sc := bufio.NewScanner(strings.NewReader(h.logs.String()))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["plugin"] == plugin && line["msg"] == msg && line["requestId"] == id {
				return line
			}
		}
	}
	h.t.Fatalf("no %q line of %s for request %s:\n%s", msg, plugin, id, tail(h.logs.String(), 30))
	return nil
}

// requestLine waits for the host's log line of the request with id.
func (h *host) requestLine(id string) map[string]any {
	h.t.Helper()
	if id == "" {
		h.t.Fatal("answer without X-Request-Id")
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		sc := bufio.NewScanner(strings.NewReader(h.logs.String()))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "request" && line["requestId"] == id {
				return line
			}
		}
	}
	h.t.Fatalf("no log line for request %s:\n%s", id, tail(h.logs.String(), 30))
	return nil
}
