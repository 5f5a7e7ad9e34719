package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/mdpress/mdpress/core/papers"
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

// TestPluginBinary builds the plugin, talks to it over go-plugin as the host
// does, and checks that its browser dies with it.
func TestPluginBinary(t *testing.T) {
	if _, err := os.Stat("/usr/lib/chromium/chromium"); err != nil {
		if _, err := exec.LookPath("chromium"); err != nil {
			t.Skip("no Chromium on this machine; install the chromium package")
		}
	}
	bin := plugintest.Build(t, ".")
	p, cmd := startCmd(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	info, err := p.Configure(ctx, &stage.ConfigureRequest{Config: []byte(`{"tabs":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if info.Info.Name != "render-chrome" || !slices.Contains(info.Info.Capabilities, stage.CapReadsHTML) {
		t.Fatalf("info %+v", info.Info)
	}
	if err := p.Health(ctx); err != nil {
		t.Fatal(err)
	}
	a4, _ := papers.Lookup("A4")
	res, err := p.Render(ctx, &stage.RenderRequest{
		HTML: `<!doctype html><html><head><style>@page { size: A4; margin: 54pt }</style></head><body><h1>Hello</h1></body></html>`,
		Page: a4,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(res.PDF, []byte("%PDF-")) || res.Pages != 1 {
		t.Fatalf("got %d pages, %q", res.Pages, res.PDF[:min(8, len(res.PDF))])
	}

	// The host dying without a word must not leave a browser behind.
	children := childrenOf(cmd.Process.Pid)
	if len(children) == 0 {
		t.Fatal("the plugin runs no browser")
	}
	if err := syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The browser leads a process group of its own, its helpers with it;
	// they die after it, and may write to the profile until they do.
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := 0
		for _, pid := range children {
			left += len(groupAlive(pid))
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d browser processes outlived the plugin", left)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The killed plugin could not remove its browser profile; the next
	// plugin to start does.
	stale, _ := filepath.Glob(filepath.Join(os.TempDir(), "mdpress-chrome-"+strconv.Itoa(cmd.Process.Pid)+"-*"))
	if len(stale) == 0 {
		t.Fatal("no profile of the killed plugin to clean up")
	}
	next := start(t, bin)
	if _, err := next.Configure(ctx, &stage.ConfigureRequest{Config: []byte(`{"tabs":1}`)}); err != nil {
		t.Fatal(err)
	}
	for _, dir := range stale {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("profile %s of the dead plugin is still there", dir)
		}
	}
}

// startCmd launches the plugin binary as the host does.
func startCmd(t *testing.T, bin string) (*sdkplugin.Client, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin)
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  sdkplugin.Handshake,
		Plugins:          sdkplugin.Map(stage.NameRender),
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
	})
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rpc.Dispense(stage.NameRender)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*sdkplugin.Client), cmd
}

func start(t *testing.T, bin string) *sdkplugin.Client {
	p, _ := startCmd(t, bin)
	return p
}

// procs lists the processes whose /proc stat fields after the command
// name (state, ppid, pgrp, ...) match.
func procs(match func(f []string) bool) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 2 && match(f) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// childrenOf lists the direct children of pid.
func childrenOf(pid int) []int {
	return procs(func(f []string) bool { return f[1] == strconv.Itoa(pid) })
}

// groupAlive lists the live processes of process group pgid.
func groupAlive(pgid int) []int {
	return procs(func(f []string) bool { return f[2] == strconv.Itoa(pgid) && f[0] != "Z" })
}

// TestBinaryConformance runs the SDK's renderer contract against the built
// binary over go-plugin, as the host would launch it.
func TestBinaryConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin binary")
	}
	if _, err := os.Stat("/usr/lib/chromium/chromium"); err != nil {
		if _, err := exec.LookPath("chromium"); err != nil {
			t.Skip("no Chromium on this machine; install the chromium package")
		}
	}
	bin := plugintest.Build(t, ".")
	c := plugintest.Launch(t, bin, stage.NameRender, plugintest.Config{JSON: `{"tabs":1}`})
	plugintest.Renderer(t, c, plugintest.Config{Configured: true}, "")
}
