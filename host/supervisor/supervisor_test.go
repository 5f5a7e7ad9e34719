package supervisor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
	"golang.org/x/sys/unix"
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

// TestDependencyDownIsNotReadyNotRelaunched: a plugin that answers its
// health check with CodeUnavailable (its database is down) is not ready
// but keeps running, and is ready again, the same process, when the
// dependency is back. Relaunched, it would fail to configure without the
// dependency and then wait out a backoff of up to a minute.
func TestDependencyDownIsNotReadyNotRelaunched(t *testing.T) {
	dir := buildFlaky(t)
	marker := filepath.Join(t.TempDir(), "sick")
	t.Setenv("FLAKY_MARKER", marker)
	const interval = 50 * time.Millisecond
	sup := New(slog.New(slog.NewTextHandler(io.Discard, nil)), dir, WithHealthInterval(interval))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := sup.Start(ctx, []Spec{{Stage: stage.NameParse, Plugin: "flaky", Config: &stage.ConfigureRequest{Config: []byte("{}")}}}); err != nil {
		t.Fatal(err)
	}
	defer sup.Stop()
	first := sup.Status()[0].Pid

	if err := os.WriteFile(marker, []byte("unavailable"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { sup.Run(ctx); close(done) }()
	waitFor(t, "not ready", func() bool { return sup.Ready() != nil })
	time.Sleep(10 * interval) // well past the three failed checks that relaunch a sick plugin
	if st := sup.Status()[0]; st.Restarts != 0 || st.Pid != first || st.Healthy {
		t.Fatalf("with its dependency down: %+v, want the first process (pid %d), unhealthy, never relaunched", st, first)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "ready again", func() bool { return sup.Ready() == nil })
	if st := sup.Status()[0]; st.Restarts != 0 || st.Pid != first {
		t.Fatalf("after the dependency came back: %+v, want the first process (pid %d)", st, first)
	}
	cancel()
	<-done
}

// startFlaky starts a supervisor over the flaky test plugin, healthy, and
// returns it with the plugin's directory; the caller stops it.
func startFlaky(t *testing.T, opts ...Option) (*Supervisor, string) {
	t.Helper()
	dir := buildFlaky(t)
	t.Setenv("FLAKY_MARKER", filepath.Join(t.TempDir(), "never"))
	sup := New(slog.New(slog.NewTextHandler(io.Discard, nil)), dir, opts...)
	if err := sup.Start(context.Background(), []Spec{{Stage: stage.NameParse, Plugin: "flaky", Config: &stage.ConfigureRequest{Config: []byte("{}")}}}); err != nil {
		t.Fatal(err)
	}
	return sup, dir
}

// killPlugin SIGKILLs the plugin and waits until it is gone; it returns
// the pid it had.
func killPlugin(t *testing.T, sup *Supervisor) int {
	t.Helper()
	pid := sup.Status()[0].Pid
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "process gone", func() bool { return !alive(pid) })
	return pid
}

func TestDeadProcessRelaunchedOnDemand(t *testing.T) {
	sup, _ := startFlaky(t)
	defer sup.Stop()
	ctx := context.Background()
	pid := killPlugin(t, sup)
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

// TestKilledPluginSocketRemoved: a plugin killed outright cannot remove
// its socket file; the supervisor does, when it relaunches the plugin and
// when it stops.
func TestKilledPluginSocketRemoved(t *testing.T) {
	sup, _ := startFlaky(t)
	defer sup.Stop()
	socket := func() string {
		t.Helper()
		sl := sup.slots[stage.NameParse]
		sl.mu.Lock()
		defer sl.mu.Unlock()
		rc := sl.client.ReattachConfig()
		if rc == nil || rc.Addr.Network() != "unix" {
			t.Fatalf("plugin address %+v, want a unix socket", rc)
		}
		return rc.Addr.String()
	}
	exists := func(path string) bool { _, err := os.Lstat(path); return err == nil }

	first := socket()
	killPlugin(t, sup)
	if _, err := sup.Client(context.Background(), stage.NameParse); err != nil {
		t.Fatal(err)
	}
	if exists(first) {
		t.Errorf("relaunch left the killed plugin's socket %s", first)
	}
	second := socket()
	killPlugin(t, sup)
	sup.Stop()
	if exists(second) {
		t.Errorf("stop left the killed plugin's socket %s", second)
	}
}

// TestConfigureErrorSaidOnce: a plugin's refusal of its config block
// crosses gRPC and is wrapped once by the supervisor; its message appears
// once, after what the supervisor was doing.
func TestConfigureErrorSaidOnce(t *testing.T) {
	dir := buildFlaky(t)
	sup := New(slog.New(slog.NewTextHandler(io.Discard, nil)), dir)
	err := sup.Start(t.Context(), []Spec{{Stage: stage.NameParse, Plugin: "flaky", Config: &stage.ConfigureRequest{Config: []byte(`{"bad": 1}`)}}})
	if stage.CodeOf(err) != stage.CodeInvalid {
		t.Fatalf("Start = %v, want an invalid-config error", err)
	}
	const want = `plugin flaky (parse stage): configure: flaky config: unknown key "bad"`
	if err.Error() != want {
		t.Fatalf("Start = %q\nwant %q", err, want)
	}
}

// TestPluginOfAnotherStageRefused: a binary built for another stage
// answers Configure and Health, which every plugin serves, and so passed
// the start and /readyz; every request then failed with "unknown service".
func TestPluginOfAnotherStageRefused(t *testing.T) {
	dir := buildFlaky(t)
	sup := New(slog.New(slog.NewTextHandler(io.Discard, nil)), dir)
	err := sup.Start(t.Context(), []Spec{{Stage: stage.NameRender, Plugin: "flaky", Config: &stage.ConfigureRequest{Config: []byte("{}")}}})
	const want = "plugin flaky (render stage): it serves the parse stage, not render: a plugin for another stage"
	if err == nil || err.Error() != want {
		t.Fatalf("Start = %v\nwant %q", err, want)
	}
}

func TestMissingBinary(t *testing.T) {
	sup := New(slog.New(slog.NewTextHandler(io.Discard, nil)), t.TempDir())
	err := sup.Start(context.Background(), []Spec{{Stage: stage.NameParse, Plugin: "nope", Config: &stage.ConfigureRequest{}}})
	if err == nil || !strings.Contains(err.Error(), "make build") {
		t.Fatalf("a missing plugin binary must fail Start and say how to build it: %v", err)
	}
	// A mistyped name is answered with the stage's plugins there are.
	dir := t.TempDir()
	for _, name := range []string{"render-chrome", "render-fpdf", "sink-disk"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sup = New(slog.New(slog.NewTextHandler(io.Discard, nil)), dir)
	err = sup.Start(context.Background(), []Spec{{Stage: stage.NameRender, Plugin: "foo", Config: &stage.ConfigureRequest{}}})
	if err == nil || !strings.Contains(err.Error(), "render-chrome, render-fpdf") || strings.Contains(err.Error(), "sink-disk") {
		t.Fatalf("a mistyped render plugin: %v; want the render plugins listed", err)
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

// replaceWithScript swaps the plugin binary in dir for a shell script, as
// an operator's broken build would.
func replaceWithScript(t *testing.T, dir, script string) {
	t.Helper()
	path := filepath.Join(dir, "flaky")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestHungRelaunchBlocksNothingElse: a plugin that hangs at start holds up
// only the requests that need it, each within its own deadline; the
// status (/readyz) and the shutdown answer at once.
func TestHungRelaunchBlocksNothingElse(t *testing.T) {
	sup, dir := startFlaky(t)
	ctx := context.Background()
	replaceWithScript(t, dir, "exec sleep 30")
	killPlugin(t, sup)

	// The relaunch hangs for 30 s: a call that waited for it would take
	// that long. The bounds sit far below it and far above what a loaded
	// machine needs for calls that do not wait.
	const blocked = 10 * time.Second
	rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := sup.Client(rctx, stage.NameParse); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("a request during a hung relaunch: %v", err)
	}
	if took := time.Since(start); took > blocked {
		t.Fatalf("the request waited %v past its 300 ms deadline: it waited for the hung relaunch", took)
	}
	start = time.Now()
	st := sup.Status()[0]
	if st.Healthy || time.Since(start) > blocked {
		t.Fatalf("status during a hung relaunch: %+v after %v", st, time.Since(start))
	}
	// Stop waits for nothing here: not the launch, nor the grace it gives
	// a running plugin to exit.
	start = time.Now()
	sup.Stop()
	if took := time.Since(start); took > killGrace {
		t.Fatalf("Stop took %v during a hung relaunch: it waited for it", took)
	}
}

// TestCrashAtStartBacksOff: a plugin that exits at start is relaunched once
// per backoff step, not on every request, and every attempt is counted.
func TestCrashAtStartBacksOff(t *testing.T) {
	attempts := filepath.Join(t.TempDir(), "attempts")
	restarts := 0
	var mu sync.Mutex
	sup, dir := startFlaky(t, WithRestartHook(func(string) { mu.Lock(); restarts++; mu.Unlock() }))
	defer sup.Stop()
	ctx := context.Background()
	replaceWithScript(t, dir, "echo x >> "+attempts+"; exit 1")
	killPlugin(t, sup)
	for range 20 {
		if _, err := sup.Client(ctx, stage.NameParse); stage.CodeOf(err) != stage.CodeUnavailable {
			t.Fatalf("a request while the plugin cannot start: %v", err)
		}
	}
	b, _ := os.ReadFile(attempts)
	if n := strings.Count(string(b), "x"); n != 1 {
		t.Fatalf("%d launch attempts for 20 requests within the first backoff, want 1", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if restarts != 1 {
		t.Fatalf("restart hook called %d times, want 1 (the attempt)", restarts)
	}
	if st := sup.Status()[0]; st.Healthy || !strings.Contains(st.Error, "start") {
		t.Fatalf("status %+v, want the start failure", st)
	}
}

// TestEarlyExitsBackOff: a plugin that starts, passes its checks and exits
// a moment later, again and again, is relaunched at once the first time,
// then after a growing wait; it was relaunched every few hundred
// milliseconds for good, /readyz flapping all the while.
func TestEarlyExitsBackOff(t *testing.T) {
	var mu sync.Mutex
	restarts := 0
	sup, _ := startFlaky(t, WithHealthInterval(50*time.Millisecond),
		WithRestartHook(func(string) { mu.Lock(); restarts++; mu.Unlock() }))
	defer sup.Stop()
	t.Setenv("FLAKY_EXIT_AFTER", "100ms")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sup.Run(ctx); close(done) }()
	killPlugin(t, sup)
	// At once, then after 1 s and 2 s: four launches in 3.5 s at most;
	// without a backoff, some twenty.
	time.Sleep(3500 * time.Millisecond)
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if restarts < 2 || restarts > 4 {
		t.Fatalf("%d relaunches in 3.5 s of a plugin that exits 100 ms after each start, want 2-4", restarts)
	}
}

// freeze stops the plugin's process (SIGSTOP), as a cgroup freezer or a
// process wedged whole would: it answers nothing, not even go-plugin's
// request to shut down. It returns the pid, killed when the test ends.
func freeze(t *testing.T, sup *Supervisor) int {
	t.Helper()
	pid := sup.Status()[0].Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// TestFrozenPluginRelaunched: a plugin that stops answering altogether
// fails its health checks and is replaced; go-plugin's Kill alone waited
// forever for its answer, and the stage stayed down.
func TestFrozenPluginRelaunched(t *testing.T) {
	sup, _ := startFlaky(t, WithHealthInterval(100*time.Millisecond))
	defer sup.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sup.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	first := freeze(t, sup)
	waitFor(t, "not ready", func() bool { return sup.Ready() != nil })
	waitFor(t, "ready again", func() bool { return sup.Ready() == nil })
	if pid := sup.Status()[0].Pid; pid == first {
		t.Fatalf("still the frozen process %d", pid)
	}
	if alive(first) {
		t.Fatalf("the frozen process %d was not killed", first)
	}
}

// TestStopKillsFrozenPlugin: the host's shutdown does not wait for a
// plugin that answers nothing.
func TestStopKillsFrozenPlugin(t *testing.T) {
	sup, _ := startFlaky(t)
	pid := freeze(t, sup)
	start := time.Now()
	sup.Stop()
	if took := time.Since(start); took > killGrace+2*time.Second {
		t.Fatalf("Stop took %v with a frozen plugin", took)
	}
	if alive(pid) {
		t.Fatalf("the frozen process %d outlived Stop", pid)
	}
}

// TestStableRunForgetsEarlyExits: a process that ran stably and was then
// replaced for failing its health checks (here, frozen) has proved the
// plugin stable, as an exit after stableAfter does: the next process's
// early exit is the first in a row, relaunched at once. The early exits
// before the stable run were still counted, so that exit was taken for a
// second in a row and the stage stayed down for a backoff.
func TestStableRunForgetsEarlyExits(t *testing.T) {
	defer func(d time.Duration) { stableAfter = d }(stableAfter)
	stableAfter = 2 * time.Second
	sup, _ := startFlaky(t, WithHealthInterval(100*time.Millisecond))
	defer sup.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// One early exit, relaunched at once.
	killPlugin(t, sup)
	if _, err := sup.Client(ctx, stage.NameParse); err != nil {
		t.Fatalf("after a first early exit: %v", err)
	}
	// A stable run, ended by failing health checks.
	time.Sleep(stableAfter + 500*time.Millisecond)
	done := make(chan struct{})
	go func() { sup.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	stable := freeze(t, sup)
	waitFor(t, "relaunched for its health checks", func() bool {
		st := sup.Status()[0]
		return st.Pid != stable && st.Pid != 0 && st.Healthy
	})
	// Its successor dies at once: the first early exit since a stable run.
	killPlugin(t, sup)
	c, err := sup.Client(ctx, stage.NameParse)
	if err != nil {
		t.Fatalf("the first early exit after a stable run was backed off: %v (%+v)", err, sup.Status()[0])
	}
	if _, err := c.Parse(ctx, &stage.ParseRequest{Markdown: "x"}); err != nil {
		t.Fatal(err)
	}
}

// TestRequestAfterCrashGetsNewProcess: a killed plugin runs its exit for
// a while (tens of milliseconds for a few hundred MiB, more on a loaded
// machine) before /proc shows it a zombie, and closes its socket within
// it, failing the request it serves. The request right after, arriving
// in that window, must reach a relaunched process, not the dead one's
// client (in CI, a killed render failed the next request too).
func TestRequestAfterCrashGetsNewProcess(t *testing.T) {
	relaunchEveryKill(t)
	t.Setenv("FLAKY_HEAP_MIB", "300")
	sup, _ := startFlaky(t)
	defer sup.Stop()
	ctx := context.Background()
	req := &stage.ParseRequest{Markdown: "x"}
	caught := 0
	for round := 0; round < 20 && caught < 3; round++ {
		pid, stat, uncrowd := killCrowded(t, sup)
		// Wait for the exit to begin, and ask for a client as soon as it
		// has if the state still says running.
		inWindow := false
		buf := make([]byte, 512)
		for {
			n, _ := stat.ReadAt(buf, 0)
			state, flags, ok := statStateFlags(buf[:n])
			if !ok || state == 'Z' || state == 'X' {
				break
			}
			if flags&pfExiting != 0 {
				inWindow = true
				break
			}
		}
		// The crowd ends first, or the relaunch would wait out the
		// crowded exit; the rest of the exit still takes a while.
		uncrowd()
		c, err := sup.Client(ctx, stage.NameParse)
		stat.Close()
		if err != nil {
			t.Fatalf("round %d: client after the crash: %v", round, err)
		}
		if !inWindow {
			continue // the exit ran through before it could be seen
		}
		caught++
		if _, err := c.Parse(ctx, req); err != nil {
			t.Fatalf("round %d: a request while the killed plugin exits was given its client: %v", round, err)
		}
		if st := sup.Status()[0]; st.Pid == pid {
			t.Fatalf("round %d: status %+v, want a relaunched process", round, st)
		}
	}
	t.Logf("%d kills caught while exiting", caught)
	if caught == 0 {
		t.Skip("no kill was caught between the start of its exit and the zombie state in 20 rounds")
	}
}

// statStateFlags reads the state and flags of a /proc/PID/stat line.
func statStateFlags(stat []byte) (state byte, flags uint64, ok bool) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(stat[end+1:])
	if len(f) < 7 || len(f[0]) != 1 {
		return 0, 0, false
	}
	flags, err := strconv.ParseUint(string(f[6]), 10, 64)
	return f[0][0], flags, err == nil
}

// relaunchEveryKill makes every exit in the test a first crash, which is
// relaunched at once rather than after a backoff.
func relaunchEveryKill(t *testing.T) {
	stable := stableAfter
	stableAfter = 0
	t.Cleanup(func() { stableAfter = stable })
}

// killCrowded crowds the plugin (crowd) and SIGKILLs it, so that its exit
// waits for a CPU. It returns the plugin's pid, its /proc stat file, open
// from before the kill, and the func that ends the crowd.
func killCrowded(t *testing.T, sup *Supervisor) (int, *os.File, func()) {
	t.Helper()
	pid := sup.Status()[0].Pid
	stat, err := os.Open(filepath.Join("/proc", itoa(pid), "stat"))
	if err != nil {
		t.Fatal(err)
	}
	uncrowd := crowd(t, pid)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		uncrowd()
		stat.Close()
		t.Fatal(err)
	}
	return pid, stat, uncrowd
}

// crowd pins every thread of pid to one CPU at the lowest priority and
// keeps that CPU busy, as a loaded machine does to a dying plugin, so
// that its exit takes long enough to be seen in. The returned func ends
// the load.
func crowd(t *testing.T, pid int) func() {
	t.Helper()
	var mine unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mine); err != nil || mine.Count() < 2 {
		t.Skipf("needs two CPUs to crowd one (affinity: %v)", err)
	}
	cpu := -1
	for i := range 1024 {
		if mine.IsSet(i) {
			cpu = i
		}
	}
	var one unix.CPUSet
	one.Set(cpu)
	tasks, err := os.ReadDir(filepath.Join("/proc", itoa(pid), "task"))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		// A thread may end meanwhile; the rest still crowd.
		_ = unix.SchedSetaffinity(tid, &one)
		_ = unix.Setpriority(unix.PRIO_PROCESS, tid, 19)
	}
	var done atomic.Bool
	stopped := make(chan struct{})
	go func() {
		runtime.LockOSThread() // the thread dies with the goroutine, pin and all
		defer close(stopped)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			return
		}
		for !done.Load() {
		}
	}()
	return func() { done.Store(true); <-stopped }
}

// TestExiting reads /proc/PID/stat lines as the kernel writes them.
func TestExiting(t *testing.T) {
	for _, c := range []struct {
		stat string
		want bool
	}{
		{"4242 (flaky) S 4200 4242 4200 0 -1 4194560 1033 0 0 0 3 1 0 0 20 0 7 0", false},
		{"4242 (flaky) R 4200 4242 4200 0 -1 4194564 1033 0 0 0 3 1 0 0 20 0 7 0", true}, // PF_EXITING
		{"4242 (flaky) Z 4200 4242 4200 0 -1 4227084 1033 0 0 0 3 1 0 0 20 0 1 0", true},
		{"4242 (a) Z (b) S 4200 4242 4200 0 -1 4194560 1 0 0 0", false}, // a name with ") Z ("
		{"4242 (odd name) X 1 2 3 0 -1 0", true},
		// SIGKILL pending (256) in the 31st field, before the exit begins.
		{"4242 (flaky) S 4200 4242 4200 0 -1 4194560 1033 0 0 0 3 1 0 0 20 0 7 0 4811 1294336000 2731 18446744073709551615 4194304 7202709 140723417411856 0 0 256 0 0 2143420159 0 0 0 17 1 0 0 0 0 0", true},
		{"4242 (flaky) S 4200 4242 4200 0 -1 4194560 1033 0 0 0 3 1 0 0 20 0 7 0 4811 1294336000 2731 18446744073709551615 4194304 7202709 140723417411856 0 0 16384 0 0 2143420159 0 0 0 17 1 0 0 0 0 0", false}, // SIGTERM
		{"4242 (flaky) S 4200 4242 4200 0 -1 4194560 1033 0 0 0 3 1 0 0 20 0 7 0 4811 1294336000 2731 18446744073709551615 4194304 7202709 140723417411856 0 0 0 0 0 2143420159 0 0 0 17 1 0 0 0 0 0", false},
		{"4242 (short) S 1 2", false},
		{"", false},
	} {
		if got := exiting([]byte(c.stat)); got != c.want {
			t.Errorf("exiting(%q) = %v, want %v", c.stat, got, c.want)
		}
	}
}

// TestRequestRightAfterKillGetsNewProcess: between a SIGKILL and the
// moment the killed plugin's threads run their exit, /proc shows it
// sleeping or running, neither exiting nor a zombie, and its socket is
// still open: a request handed its client then is written to a process
// that will never read it, and fails when the exit closes the socket.
// On a loaded machine that lasts as long as the plugin waits for a CPU
// (an OOM kill, an operator's kill -9, while the host is busy). The
// kernel marks the kill pending on every thread at once, so the request
// must reach a relaunched process.
func TestRequestRightAfterKillGetsNewProcess(t *testing.T) {
	relaunchEveryKill(t)
	sup, _ := startFlaky(t)
	defer sup.Stop()
	ctx := context.Background()
	caught := 0
	for round := 0; round < 10 && caught < 3; round++ {
		pid, stat, uncrowd := killCrowded(t, sup)
		buf := make([]byte, 512)
		n, _ := stat.ReadAt(buf, 0)
		stat.Close()
		state, flags, ok := statStateFlags(buf[:n])
		before := ok && state != 'Z' && state != 'X' && flags&pfExiting == 0
		// The request goes while the plugin still waits for its CPU; the
		// crowd ends a moment later, so that its exit, and any relaunch
		// that waits for it, can run.
		answer := make(chan error, 1)
		go func() {
			c, err := sup.Client(ctx, stage.NameParse)
			if err == nil {
				_, err = c.Parse(ctx, &stage.ParseRequest{Markdown: "x"})
			}
			answer <- err
		}()
		time.Sleep(50 * time.Millisecond)
		uncrowd()
		err := <-answer
		if !before {
			continue // the exit had begun before it could be seen
		}
		caught++
		if err != nil {
			t.Fatalf("round %d: a request right after the plugin was killed, before its exit ran, failed: %v", round, err)
		}
		if st := sup.Status()[0]; st.Pid == pid {
			t.Fatalf("round %d: status %+v, want a relaunched process", round, st)
		}
	}
	t.Logf("%d kills caught before their exit began", caught)
	if caught == 0 {
		t.Skip("no kill was caught before its exit began in 10 rounds")
	}
}

// TestStopKillsPluginBeingReplaced: a shutdown while a relaunch is still
// killing the process it replaces (frozen, it answers nothing, so the
// kill waits out its grace) kills that process too. Stop left it to the
// relaunch, which the host's exit then cut short, and the frozen process
// outlived the host: its parent-death signal waits, pending, for a
// process that does not run.
func TestStopKillsPluginBeingReplaced(t *testing.T) {
	sup, _ := startFlaky(t, WithHealthInterval(100*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sup.Run(ctx); close(done) }()
	pid := freeze(t, sup)
	waitFor(t, "relaunching", func() bool { return sup.Status()[0].Error == "relaunching" })
	cancel()
	<-done
	start := time.Now()
	sup.Stop()
	if took := time.Since(start); took > killGrace/2 {
		t.Fatalf("Stop took %v", took)
	}
	// Killed, the process is reaped by the relaunch's kill at once.
	for end := time.Now().Add(time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the frozen process %d being replaced outlived Stop by a second", pid)
		}
	}
}

// TestStartFailureSaysWhy: a plugin that stops before its handshake and
// says why, on stderr or on stdout, fails Start with that reason in one
// line. The reason was logged at debug level only, and the error was
// go-plugin's paragraph on architectures and permissions.
func TestStartFailureSaysWhy(t *testing.T) {
	dir := buildFlaky(t)
	start := func(t *testing.T) error {
		t.Helper()
		sup := New(slog.New(slog.NewTextHandler(io.Discard, nil)), dir)
		t.Cleanup(sup.Stop)
		return sup.Start(t.Context(), []Spec{{Stage: stage.NameParse, Plugin: "flaky", Config: &stage.ConfigureRequest{Config: []byte("{}")}}})
	}
	for _, tc := range []struct{ name, env, value, want string }{
		{"panic before Serve", "FLAKY_PANIC", "no config file",
			"plugin flaky (parse stage): start: no handshake; its stderr said: panic: no config file"},
		{"an error logged before an exit", "FLAKY_QUIT", "open /etc/flaky.conf: permission denied",
			"plugin flaky (parse stage): start: no handshake; its stderr said: cannot start err=open /etc/flaky.conf: permission denied"},
		{"a line on stdout before Serve", "FLAKY_STDOUT", "flaky starting up",
			`plugin flaky (parse stage): start: no handshake: it wrote "flaky starting up" on stdout, which carries the handshake (a plugin logs to stderr)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			if err := start(t); err == nil || err.Error() != tc.want {
				t.Fatalf("Start = %v\nwant %q", err, tc.want)
			}
		})
	}
	t.Run("an exit with a reason on stderr", func(t *testing.T) {
		err := startScript(t, "#!/bin/sh\necho 'starting' >&2\necho 'flaky: cannot open /etc/flaky.conf: permission denied' >&2\nexit 3\n")
		const want = "plugin flaky (parse stage): start: no handshake; its stderr said: flaky: cannot open /etc/flaky.conf: permission denied"
		if err == nil || err.Error() != want {
			t.Fatalf("Start = %v\nwant %q", err, want)
		}
	})
	t.Run("an exit without a word", func(t *testing.T) {
		// Nothing to quote: go-plugin's diagnosis of the binary is all
		// there is.
		err := startScript(t, "#!/bin/sh\nexit 1\n")
		if err == nil || !strings.Contains(err.Error(), "Failed to read any lines from plugin's stdout") {
			t.Fatalf("Start = %v, want go-plugin's error", err)
		}
	})
}

// startScript starts a supervisor whose parse plugin, "flaky", is script.
func startScript(t *testing.T, script string) error {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flaky"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	sup := New(slog.New(slog.NewTextHandler(io.Discard, nil)), dir)
	t.Cleanup(sup.Stop)
	return sup.Start(t.Context(), []Spec{{Stage: stage.NameParse, Plugin: "flaky", Config: &stage.ConfigureRequest{Config: []byte("{}")}}})
}

func TestStderrTailStopsAtHandshake(t *testing.T) {
	var w stderrTail
	fmt.Fprintln(&w, "panic: before")
	if got := w.reason(); got != "panic: before" {
		t.Fatalf("reason = %q, want the panic line", got)
	}
	w.handshaken()
	fmt.Fprintln(&w, "panic: after the handshake")
	fmt.Fprintln(&w, "a line of the running plugin's log")
	if got := w.reason(); got != "" {
		t.Fatalf("reason after the handshake = %q, want nothing kept", got)
	}
}
