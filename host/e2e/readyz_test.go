package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestReadyzWhileStageDown: while a required stage's plugin is down (its
// process gone and its binary failing to start), /readyz answers 503 and
// a conversion is refused with a safe error and charged nothing; /healthz
// still says the process is up. Once the binary starts again, the host
// relaunches the plugin by itself, /readyz is 200 and conversions work.
func TestReadyzWhileStageDown(t *testing.T) {
	pdfcheck.Require(t)
	// A plugin dir of links to the built plugins, so that one of them can
	// be swapped for a binary that fails at start.
	dir := t.TempDir()
	for _, p := range plugins {
		if err := os.Symlink(filepath.Join(binDir, "plugins", p), filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	const victim = "render-fpdf"
	link := filepath.Join(dir, victim)
	h := startHost(t, fpdf(), withArgs("--plugin-dir", dir))
	_, key := h.account("pro", 5)

	broken := filepath.Join(t.TempDir(), "broken")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho 'render-fpdf: cannot start' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	swap := func(target string) {
		t.Helper()
		tmp := link + ".new"
		if err := os.Symlink(target, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, link); err != nil {
			t.Fatal(err)
		}
	}
	swap(broken)
	pid := h.plugin(victim)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for alive(pid) {
		time.Sleep(10 * time.Millisecond)
	}

	readyz := func() (int, string) {
		t.Helper()
		resp, body := h.do("GET", "/readyz", "", nil, nil)
		return resp.StatusCode, string(body)
	}
	if code, body := readyz(); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with %s down: %d %s, want 503", victim, code, body)
	}
	if resp, body := h.do("GET", "/healthz", "", nil, nil); resp.StatusCode != 200 {
		t.Fatalf("/healthz with a stage down: %d %s, want 200 (the process is up)", resp.StatusCode, body)
	}
	resp, body := h.post(key, map[string]string{"markdown": "# While down"})
	t.Logf("a conversion with %s down: %d %s", victim, resp.StatusCode, body)
	if resp.StatusCode < 500 {
		t.Fatalf("a conversion with %s down: %d %.200s, want a 5xx", victim, resp.StatusCode, body)
	}
	var e struct{ Error string }
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" || strings.Contains(e.Error, dir) {
		t.Fatalf("a conversion with %s down: body %s, want a safe error body", victim, body)
	}
	if b := h.balance(key); b != 5 {
		t.Fatalf("balance %d after a conversion refused with a stage down, want 5", b)
	}
	// Still down a moment later: a stage that cannot start is not
	// reported ready in between attempts.
	time.Sleep(500 * time.Millisecond)
	if code, body := readyz(); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz while %s keeps failing to start: %d %s, want 503", victim, code, body)
	}

	swap(filepath.Join(binDir, "plugins", victim))
	deadline := time.Now().Add(90 * time.Second)
	for {
		code, body := readyz()
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d %s 90 s after %s's binary was restored", code, body, victim)
		}
		time.Sleep(100 * time.Millisecond)
	}
	resp, pdf := h.post(key, map[string]string{"markdown": "# Back up"})
	if resp.StatusCode != 200 || !strings.Contains(pdfcheck.Text(t, pdf), "Back up") {
		t.Fatalf("a conversion after the relaunch: %d %.200s", resp.StatusCode, pdf)
	}
	if b := h.balance(key); b != 4 {
		t.Fatalf("balance %d after one conversion, want 4", b)
	}
}

// TestBinaryWithoutSink: a binary answer stores nothing, so it is served
// while the sink is down (an S3 outage, its plugin failing to start); an
// answer by URL and a binary one with an Idempotency-Key, which keep a
// file, fail with a safe 5xx and charge nothing. Binary conversions took
// the sink's client too, and all failed with a 500 while it was down.
func TestBinaryWithoutSink(t *testing.T) {
	pdfcheck.Require(t)
	dir := t.TempDir()
	for _, p := range plugins {
		if err := os.Symlink(filepath.Join(binDir, "plugins", p), filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	const victim = "sink-disk"
	h := startHost(t, fpdf(), withArgs("--plugin-dir", dir))
	_, key := h.account("pro", 5)
	broken := filepath.Join(t.TempDir(), "broken")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho 'sink-disk: cannot start' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, victim)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(broken, link); err != nil {
		t.Fatal(err)
	}
	pid := h.plugin(victim)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for alive(pid) {
		time.Sleep(10 * time.Millisecond)
	}

	for i := range 3 {
		resp, pdf := h.post(key, map[string]string{"markdown": "# Binary while the sink is down"})
		if resp.StatusCode != 200 || !strings.Contains(pdfcheck.Text(t, pdf), "Binary while the sink is down") {
			t.Fatalf("binary conversion %d with %s down: %d %.200s", i, victim, resp.StatusCode, pdf)
		}
	}
	for _, tc := range []struct {
		name string
		body map[string]string
		hdr  map[string]string
	}{
		{"output=url", map[string]string{"markdown": "# Hosted", "output": "url"}, nil},
		{"Idempotency-Key", map[string]string{"markdown": "# Kept"}, map[string]string{"Idempotency-Key": "sink-down"}},
	} {
		resp, body := h.do("POST", "/v1/pdf/markdown", key, tc.body, tc.hdr)
		if resp.StatusCode < 500 {
			t.Errorf("%s with %s down: %d %.200s, want a 5xx", tc.name, victim, resp.StatusCode, body)
		}
		decodeError(t, resp.StatusCode, body)
	}
	if b := h.balance(key); b != 2 {
		t.Fatalf("balance %d after 3 binary conversions and 2 refused, want 2", b)
	}
}
