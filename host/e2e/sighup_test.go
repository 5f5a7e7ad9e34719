package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGHUPDrains: SIGHUP, from a closed terminal or an operator who
// expects a reload, stops the host as SIGTERM does, draining, and the log
// says that there is no reload. It used to end the process on the spot,
// cutting the conversions in flight.
func TestSIGHUPDrains(t *testing.T) {
	h := startHost(t, fpdf())
	_, key := h.account("pro", 5)
	if resp, body := h.post(key, map[string]string{"markdown": "# Before"}); resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if err := h.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("still running 20 s after SIGHUP:\n%s", tail(h.logs.String(), 20))
	}
	if h.exitErr != nil {
		t.Fatalf("exit after SIGHUP: %v\n%s", h.exitErr, tail(h.logs.String(), 20))
	}
	for _, want := range []string{"does not reload its config", "draining in-flight requests", `msg=stopped`} {
		if !strings.Contains(h.logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, tail(h.logs.String(), 20))
		}
	}
}
