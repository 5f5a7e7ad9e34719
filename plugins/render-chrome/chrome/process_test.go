package chrome

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// A plugin killed a moment ago is a zombie until its host reaps it; its
// browser profile may go then already.
func TestGone(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	if gone(pid) || gone(strconv.Itoa(os.Getpid())) {
		t.Fatal("a running process reported gone")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !gone(pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a killed, unreaped process still reported alive")
		}
	}
	if _, err := os.Stat("/proc/" + pid); err != nil {
		t.Fatalf("the process was reaped before the check (%v): the zombie went untested", err)
	}
	_ = cmd.Wait()
	if !gone(pid) {
		t.Fatal("a reaped process reported alive")
	}
}

// TestSandboxed: Chromium gets its sandbox unless it runs as root (where it
// refuses one) or the config sets noSandbox, which a container without
// user namespaces needs: there the sandbox stops Chromium from starting.
func TestSandboxed(t *testing.T) {
	for _, tc := range []struct {
		euid      int
		noSandbox bool
		want      bool
	}{
		{1000, false, true},
		{1000, true, false},
		{0, false, false},
		{0, true, false},
	} {
		if got := (launchOptions{noSandbox: tc.noSandbox}).sandboxed(tc.euid); got != tc.want {
			t.Errorf("euid %d, noSandbox %v: sandboxed = %v, want %v", tc.euid, tc.noSandbox, got, tc.want)
		}
	}
	c, err := ParseConfig([]byte(`{"noSandbox": true}`))
	if err != nil || !c.NoSandbox {
		t.Fatalf("noSandbox: %+v, %v", c, err)
	}
}
