package chrome

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
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

// The memory of a process killed or exiting is on its way back: the
// watchdog that stopped a render must not read it as still held while
// the kernel gets round to the exit. The pending and exiting states last
// only milliseconds, so they are written into a real process's /proc
// files here.
func TestDying(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	dir := "/proc/" + strconv.Itoa(cmd.Process.Pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		t.Fatal(err)
	}
	withLine := func(key, value string) []byte {
		i := bytes.Index(status, []byte("\n"+key))
		if i < 0 {
			t.Fatalf("no %s in %s/status", key, dir)
		}
		end := i + 1 + bytes.IndexByte(status[i+1:], '\n')
		return slices.Concat(status[:i+1], []byte(key+"\t"+value), status[end:])
	}
	withFlags := func(flags uint64) []byte {
		f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
		f[6] = []byte(strconv.FormatUint(flags, 10))
		return slices.Concat(stat[:bytes.LastIndexByte(stat, ')')+1], []byte(" "), bytes.Join(f, []byte(" ")))
	}
	flags, err := strconv.ParseUint(string(statField(stat, 6)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name         string
		stat, status []byte
		want         bool
	}{
		{"running", stat, status, false},
		{"SIGTERM pending, which it may handle", stat, withLine("ShdPnd:", "0000000000004000"), false},
		{"SIGKILL sent to it", stat, withLine("ShdPnd:", "0000000000000100"), true},
		{"SIGKILL set on its thread for a fatal signal", stat, withLine("SigPnd:", "0000000000000100"), true},
		{"exiting", withFlags(flags | pfExiting), status, true},
	} {
		if got := dying(c.stat, c.status); got != c.want {
			t.Errorf("%s: dying = %v, want %v", c.name, got, c.want)
		}
	}
	// A real kill, unreaped: its memory is not the group's any more.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the killed process a zombie", func() bool {
		stat, err := os.ReadFile(dir + "/stat")
		return err == nil && statExited(stat)
	})
	stat, _ = os.ReadFile(dir + "/stat")
	status, _ = os.ReadFile(dir + "/status")
	if !dying(stat, status) {
		t.Error("a zombie is not dying")
	}
}
