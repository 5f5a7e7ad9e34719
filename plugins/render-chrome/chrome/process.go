package chrome

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// process is one running Chromium in a process group of its own.
type process struct {
	// ctx ends when the browser is gone, killed by us or by anyone else.
	ctx         context.Context
	cancel      context.CancelFunc
	allocCancel context.CancelFunc
	browser     *chromedp.Browser
	pgid        int
	dataDir     string
}

// launchOptions are what a browser start needs from the config.
type launchOptions struct {
	execPath  string
	proxyAddr string // the blackhole every request that escapes interception meets
	// bareNetwork lets loopback bypass the blackhole proxy, so that tests
	// can prove the Fetch gate alone keeps documents off loopback servers.
	bareNetwork bool
	// javascript lets documents run scripts; off, scripts are off for
	// the whole browser, not only the tabs the pool opens.
	javascript bool
	// noSandbox starts the browser without its sandbox (see
	// Config.NoSandbox); as root it always is.
	noSandbox bool
	log       *slog.Logger
}

// sandboxed reports whether the browser gets Chromium's sandbox: not as
// root, where Chromium refuses it, nor when the config turns it off.
func (o launchOptions) sandboxed(euid int) bool { return euid != 0 && !o.noSandbox }

// chromeFlags keep the browser off the network and quiet. Fetch
// interception answers every request of a document; everything else goes
// to the blackhole proxy: what interception cannot see (preconnects,
// prefetches, WebSockets, out-of-process frames and workers) and the
// browser's own background requests (component updates, network time,
// sign-in), which Chromium makes despite the flags that ask it not to. The
// resolver rule keeps it from resolving any name itself, so not even a DNS
// query leaves the machine.
func chromeFlags(o launchOptions) []chromedp.ExecAllocatorOption {
	// Loopback goes through the proxy too ("<-loopback>" removes the
	// implicit bypass).
	bypass := "<-loopback>"
	disable := "Translate,BlinkGenPropertyTrees"
	if o.bareNetwork {
		bypass = "127.0.0.1;[::1]"
		// Chromium's own local network access checks would stop requests
		// to loopback before the gate is tested.
		disable += ",LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests"
	}
	flags := []chromedp.ExecAllocatorOption{
		// chromedp's defaults let pages open popups: tabs the pool never
		// opened, which would outlive their document.
		chromedp.Flag("disable-popup-blocking", false),
		chromedp.Flag("disable-features", disable),
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("proxy-server", "http://"+o.proxyAddr),
		chromedp.Flag("proxy-bypass-list", bypass),
		// The proxy is an address, which the rule must leave alone.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
	}
	if !o.javascript {
		// Emulation.setScriptExecutionDisabled, which each tab also sets,
		// reaches only the tab's own renderer: a sandboxed iframe runs in
		// a process of its own and ran scripts (and opened popups that
		// spun for the browser's life). The setting holds for every frame.
		flags = append(flags, chromedp.Flag("blink-settings", "scriptEnabled=false"))
	}
	return flags
}

// profilePrefix starts the name of every browser profile directory; the
// plugin's pid follows, so that a later plugin can tell a dead one's.
const profilePrefix = "mdpress-chrome-"

// sweepProfiles removes the profiles of plugins that are gone: a plugin
// killed outright (SIGKILL, OOM) cannot remove its own.
func sweepProfiles(log *slog.Logger) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), profilePrefix+"*"))
	for _, dir := range dirs {
		rest := strings.TrimPrefix(filepath.Base(dir), profilePrefix)
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid == os.Getpid() {
			continue
		}
		if !gone(pidText) {
			continue // alive, or unknown: leave it
		}
		if err := os.RemoveAll(dir); err == nil {
			log.Info("removed the profile of a dead plugin", "dir", dir)
		}
	}
}

// gone reports whether process pid has exited: it has no /proc entry, or
// it is a zombie its parent has not reaped yet (a plugin SIGKILLed a moment
// ago, whose host is still collecting it).
func gone(pid string) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	return err == nil && statExited(stat)
}

// launch starts a browser. The browser outlives ctx, which only bounds the
// start; root bounds the browser's life.
func launch(ctx, root context.Context, o launchOptions) (*process, error) {
	dataDir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", profilePrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("user data dir: %w", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromeFlags(o)...)
	opts = append(opts,
		chromedp.ExecPath(o.execPath),
		chromedp.UserDataDir(dataDir),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			// Its own group, so that Close and a crash recovery kill the
			// renderers and the zygote too; and killed with us, so that
			// nothing outlives the plugin.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		}),
	)
	if !o.sandboxed(os.Geteuid()) {
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, allocCancel := chromedp.NewExecAllocator(root, opts...)
	logf := func(format string, args ...any) { o.log.Debug("chromium", "detail", fmt.Sprintf(format, args...)) }
	bctx, cancel := chromedp.NewContext(allocCtx,
		chromedp.WithLogf(logf), chromedp.WithErrorf(logf),
		chromedp.WithBrowserOption(chromedp.WithBrowserLogf(logf), chromedp.WithBrowserErrorf(logf), chromedp.WithConsolef(logf)))
	p := &process{ctx: bctx, cancel: cancel, allocCancel: allocCancel, dataDir: dataDir}

	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	select {
	case err = <-started:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if c := chromedp.FromContext(bctx); c != nil && c.Browser != nil {
		p.browser = c.Browser
		if proc := c.Browser.Process(); proc != nil {
			p.pgid = proc.Pid
		}
	}
	if err != nil {
		p.kill()
		return nil, fmt.Errorf("start %s: %w", o.execPath, err)
	}
	return p, nil
}

// alive reports whether the browser still runs as far as we know.
func (p *process) alive() bool { return p.ctx.Err() == nil }

// exited reports whether the browser's process has exited or is on its
// way out, killed or exiting, as /proc tells it. That is known as soon as
// the kill is sent; chromedp learns it only when it reads the end of the
// connection, which a loaded machine may run long after.
func (p *process) exited() bool {
	if !p.alive() {
		return true
	}
	if p.pgid <= 0 {
		return false
	}
	dir := filepath.Join("/proc", strconv.Itoa(p.pgid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	return dying(stat, status)
}

// version asks the browser for its version: the cheapest proof it answers.
func (p *process) version(ctx context.Context) (string, error) {
	res, err := cdp.Call(ctx, p.browser, browser.GetVersion, cdp.Empty{})
	if err != nil {
		return "", err
	}
	return res.Product, nil
}

// kill ends the whole process group at once and removes the profile. A
// graceful close can hang on a wedged browser; nothing in the profile is
// worth keeping.
func (p *process) kill() {
	if p.pgid > 0 {
		_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	}
	p.cancel()
	p.allocCancel()
	_ = os.RemoveAll(p.dataDir)
}

// rss returns the resident memory of every process in the group, in bytes:
// its anonymous and shared-memory pages, not its file-backed ones. Every
// Chromium process maps the same ~200 MB binary, so the resident total
// (statm) counted those pages once per process: an idle browser of ten
// processes read ~1 GB where it costs ~250 MB (PSS), and under ordinary
// load the 1.5 GB bound restarted it every minute. File pages are page
// cache, shared and reclaimable; what a document grows is anonymous
// memory (the heap, images) and shared memory (tiles, IPC buffers).
// Shared memory still counts once per process that maps it, so it is a
// bound, not a measure; /proc/PID/status is as cheap to read as statm,
// where PSS (smaps_rollup) walks every page table, too slow for the
// watchdog's 150 ms.
func (p *process) rss() (int64, error) {
	return groupRSS(p.pgid)
}

func groupRSS(pgid int) (int64, error) {
	if pgid <= 0 {
		return 0, errors.New("no process group")
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil || statPgrp(stat) != pgid {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil || dying(stat, status) {
			continue
		}
		total += statusKB(status, "RssAnon:") << 10
		total += statusKB(status, "RssShmem:") << 10
	}
	return total, nil
}

// statusKB returns the kB figure of a /proc/PID/status line ("RssAnon:
// 1234 kB"), or 0 when the line is missing (a zombie has none).
func statusKB(status []byte, key string) int64 {
	f := bytes.Fields(statusLine(status, key))
	if len(f) == 0 {
		return 0
	}
	kb, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return kb
}

// pfExiting is the kernel's PF_EXITING task flag (include/linux/sched.h),
// field 6 of /proc/PID/stat.
const pfExiting = 0x4

// sigkillBit is SIGKILL in the signal masks of /proc/PID/status.
const sigkillBit = 1 << (syscall.SIGKILL - 1)

// dying reports whether a process is going away, from its /proc/PID/stat
// and status: killed (a SIGKILL pending, sent to it or, for a fatal
// signal, set by the kernel) or exiting. Its memory is given back
// without anything more from us, but /proc shows it until the process
// has run its exit, tens of milliseconds after the kill on a loaded
// machine, hundreds for a compositor of a gigabyte: counted, the
// watchdog took the memory of the render it had just stopped for memory
// still held, and killed the browser under the renders beside it.
func dying(stat, status []byte) bool {
	if statExited(stat) {
		return true
	}
	if flags, err := strconv.ParseUint(string(statField(stat, 6)), 10, 64); err == nil && flags&pfExiting != 0 {
		return true
	}
	return statusMask(status, "SigPnd:")&sigkillBit != 0 || statusMask(status, "ShdPnd:")&sigkillBit != 0
}

// statusMask returns the hex signal mask of a /proc/PID/status line
// ("SigPnd:\t0000000000000100"), or 0 when it is missing.
func statusMask(status []byte, key string) uint64 {
	m, _ := strconv.ParseUint(string(bytes.TrimSpace(statusLine(status, key))), 16, 64)
	return m
}

// statusLine returns what follows key on its /proc/PID/status line, or
// nil when the line is missing.
func statusLine(status []byte, key string) []byte {
	i := bytes.Index(status, []byte("\n"+key))
	if i < 0 {
		return nil
	}
	line := status[i+1+len(key):]
	if end := bytes.IndexByte(line, '\n'); end >= 0 {
		line = line[:end]
	}
	return line
}

// statField returns field i of /proc/PID/stat counted after the command
// name (0 state, 1 ppid, 2 pgrp, ...), or nil. The name is in parentheses
// and may hold spaces and parentheses, so fields count from the last ')'.
func statField(stat []byte, i int) []byte {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return nil
	}
	f := bytes.Fields(stat[end+1:])
	if i >= len(f) {
		return nil
	}
	return f[i]
}

// statPgrp returns the process group from /proc/PID/stat, or -1.
func statPgrp(stat []byte) int {
	n, err := strconv.Atoi(string(statField(stat, 2)))
	if err != nil {
		return -1
	}
	return n
}

// statExited reports whether /proc/PID/stat is a process that has exited
// and not yet been reaped (a zombie, or one being reaped).
func statExited(stat []byte) bool {
	state := statField(stat, 0)
	return len(state) == 1 && (state[0] == 'Z' || state[0] == 'X')
}

// findChrome returns the browser binary: the configured path, else the
// real binary behind Debian's wrapper, else the usual names on PATH.
func findChrome(configured string) (string, error) {
	if configured != "" {
		if _, err := os.Stat(configured); err != nil {
			return "", err
		}
		return configured, nil
	}
	// The /usr/bin/chromium wrapper costs ~80 ms a start.
	for _, p := range []string{"/usr/lib/chromium/chromium", "/usr/lib/chromium-browser/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium binary found")
}
