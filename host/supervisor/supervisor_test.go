package supervisor

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

func buildFlaky(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "flaky"), "./testdata/flaky").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return dir
}

func TestUnhealthyPluginIsNotReadyThenRelaunched(t *testing.T) {
	dir := buildFlaky(t)
	marker := filepath.Join(t.TempDir(), "sick")
	t.Setenv("FLAKY_MARKER", marker)
	restarts := 0
	sup := New(slog.New(slog.NewTextHandler(io.Discard, nil)), dir,
		WithHealthInterval(100*time.Millisecond), WithRestartHook(func(string) { restarts++ }))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := sup.Start(ctx, []Spec{{Stage: stage.NameParse, Plugin: "flaky", Config: &stage.ConfigureRequest{Config: []byte("{}")}}}); err != nil {
		t.Fatal(err)
	}
	defer sup.Stop()
	if err := sup.Ready(); err != nil {
		t.Fatalf("ready after start: %v", err)
	}
	first := sup.Status()[0].Pid

	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { sup.Run(ctx); close(done) }()
	waitFor(t, "not ready", func() bool { return sup.Ready() != nil })
	// Three failed checks relaunch it; it stays sick while the marker is there.
	waitFor(t, "relaunched", func() bool { return sup.Status()[0].Restarts >= 1 })
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "ready again", func() bool { return sup.Ready() == nil })
	if pid := sup.Status()[0].Pid; pid == first || pid == 0 {
		t.Fatalf("pid %d after relaunch, was %d", pid, first)
	}
	if alive(first) {
		t.Fatalf("the sick process %d was not killed", first)
	}
	c, err := sup.Client(ctx, stage.NameParse)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := c.Parse(ctx, &stage.ParseRequest{Markdown: "ok"}); err != nil || resp.Document.Title != "ok" {
		t.Fatalf("parse after relaunch: %v", err)
	}
	cancel()
	<-done
	if restarts < 1 {
		t.Fatal("restart hook not called")
	}
}

func TestDeadProcessRelaunchedOnDemand(t *testing.T) {
	dir := buildFlaky(t)
	t.Setenv("FLAKY_MARKER", filepath.Join(t.TempDir(), "never"))
	sup := New(slog.New(slog.NewTextHandler(io.Discard, nil)), dir)
	ctx := context.Background()
	if err := sup.Start(ctx, []Spec{{Stage: stage.NameParse, Plugin: "flaky", Config: &stage.ConfigureRequest{Config: []byte("{}")}}}); err != nil {
		t.Fatal(err)
	}
	defer sup.Stop()
	pid := sup.Status()[0].Pid
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "process gone", func() bool { return !alive(pid) })
	c, err := sup.Client(ctx, stage.NameParse) // no Run loop: the request itself relaunches
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Parse(ctx, &stage.ParseRequest{Markdown: "x"}); err != nil {
		t.Fatal(err)
	}
	if st := sup.Status()[0]; st.Restarts != 1 || st.Pid == pid {
		t.Fatalf("status %+v", st)
	}
}

func TestMissingBinary(t *testing.T) {
	sup := New(slog.New(slog.NewTextHandler(io.Discard, nil)), t.TempDir())
	err := sup.Start(context.Background(), []Spec{{Stage: stage.NameParse, Plugin: "nope", Config: &stage.ConfigureRequest{}}})
	if err == nil {
		t.Fatal("a missing plugin binary must fail Start")
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", itoa(pid), "stat"))
	if err != nil {
		return false
	}
	for i := len(b) - 1; i > 0; i-- {
		if b[i] == ')' {
			return i+2 < len(b) && b[i+2] != 'Z'
		}
	}
	return false
}

func itoa(n int) string { return strconv.Itoa(n) }
