package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/config"
)

// TestStageTimeoutsApply: a stage's timeout in the config bounds its calls
// on a real server: with auth.timeout or parse.timeout far below what the
// call takes, a conversion fails as a timeout and is not charged; before
// a key check that times out, nothing is reserved.
func TestStageTimeoutsApply(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(c *config.Config)
	}{
		{"auth", func(c *config.Config) { c.Auth.Timeout = time.Nanosecond }},
		{"parse", func(c *config.Config) { c.Parse.Timeout = time.Nanosecond }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHost(t, fpdf(), writeConfig(t, tc.set))
			_, key := h.account("pro", 5)
			resp, body := h.post(key, map[string]string{"markdown": "# Hi"})
			if resp.StatusCode != http.StatusInternalServerError {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			e := decodeError(t, resp.StatusCode, body)
			if e.Message != "Timeout" || !strings.Contains(e.Error, "no credit was charged") {
				t.Fatalf("body %+v", e)
			}
			if tc.name == "auth" {
				return // the key check that times out is the balance's too
			}
			if credits := h.balance(key); credits != 5 {
				t.Fatalf("%d credits left after a timed-out conversion, want 5", credits)
			}
		})
	}
}

// TestStageFailureCauseLogged: a stage's internal failure reaches the
// client as a bare 500, and its cause reaches the host's log through the
// plugin's: here sink-disk's directory, gone under it. The SDK wrote such
// causes to a stderr that go-plugin had redirected where no one reads.
func TestStageFailureCauseLogged(t *testing.T) {
	h := startHost(t, fpdf())
	_, key := h.account("pro", 5)
	if err := os.RemoveAll(filepath.Join(h.DataDir, "files")); err != nil {
		t.Fatal(err)
	}
	resp, body := h.post(key, map[string]string{"markdown": "# Hi", "output": "url"})
	if resp.StatusCode != http.StatusInternalServerError || strings.Contains(string(body), "no such file") {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	// The plugin's line says why; the host's says which stage failed.
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`level=ERROR msg="stage call failed" plugin=sink-disk err=".*no such file or directory`),
		regexp.MustCompile(`level=ERROR msg="request failed" .* err="sink: internal error"`),
	} {
		for deadline := time.Now().Add(5 * time.Second); !want.MatchString(h.logs.String()); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s in the host's log:\n%s", want, tail(h.logs.String(), 30))
			}
		}
	}
}
