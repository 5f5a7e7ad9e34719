// Package supervisor runs the stage plugins as child processes: it launches
// each configured binary through go-plugin, configures and health-checks it,
// relaunches one that dies or stops answering, and kills them all on
// shutdown. Plugins run in their own process group with a parent-death
// signal, so none outlives the host.
package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Spec says which plugin serves a stage and how it is configured.
type Spec struct {
	Stage  string
	Plugin string // binary name under the plugin dir
	Config *stage.ConfigureRequest
}

// Supervisor owns the plugin processes.
type Supervisor struct {
	log       *slog.Logger
	dir       string
	onRestart func(plugin string)
	interval  time.Duration
	level     slog.Level

	mu    sync.RWMutex
	slots map[string]*slot // by stage
}

// Option configures a Supervisor.
type Option func(*Supervisor)

// WithRestartHook is called when a relaunch of a plugin begins, whether
// or not it then starts: a plugin that keeps crashing at start counts each
// attempt.
func WithRestartHook(fn func(plugin string)) Option { return func(s *Supervisor) { s.onRestart = fn } }

// WithLogLevel passes the host's log level to the plugins.
func WithLogLevel(l slog.Level) Option { return func(s *Supervisor) { s.level = l } }

// WithHealthInterval sets how often plugins are health-checked.
func WithHealthInterval(d time.Duration) Option { return func(s *Supervisor) { s.interval = d } }

// New returns a supervisor for plugin binaries in dir. It starts nothing.
func New(log *slog.Logger, dir string, opts ...Option) *Supervisor {
	s := &Supervisor{log: log, dir: dir, onRestart: func(string) {}, interval: 2 * time.Second, slots: map[string]*slot{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Start launches, configures and health-checks every plugin, concurrently.
// On error every plugin already started is stopped.
func (s *Supervisor) Start(ctx context.Context, specs []Spec) error {
	var wg sync.WaitGroup
	errs := make([]error, len(specs))
	slots := make([]*slot, len(specs))
	for i, sp := range specs {
		path, err := s.binary(sp.Stage, sp.Plugin)
		if err != nil {
			return err
		}
		slots[i] = &slot{spec: sp, path: path, log: s.log.With("plugin", sp.Plugin), level: s.level}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = slots[i].launch(ctx)
		}(i)
	}
	wg.Wait()
	s.mu.Lock()
	for _, sl := range slots {
		s.slots[sl.spec.Stage] = sl
	}
	s.mu.Unlock()
	if err := errors.Join(errs...); err != nil {
		s.Stop()
		return err
	}
	return nil
}

func (s *Supervisor) binary(stageName, name string) (string, error) {
	path := filepath.Join(s.dir, name)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Most often a mistyped --backend or --sink: say what there is.
		var there []string
		entries, _ := os.ReadDir(s.dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), stageName+"-") && !e.IsDir() {
				there = append(there, e.Name())
			}
		}
		if len(there) == 0 {
			return "", fmt.Errorf("plugin %s: not in %s, which has no %s plugin (build them with make build, or set pluginDir)", name, s.dir, stageName)
		}
		return "", fmt.Errorf("plugin %s: not in %s; its %s plugins: %s", name, s.dir, stageName, strings.Join(there, ", "))
	}
	if err != nil {
		return "", fmt.Errorf("plugin %s: %w", name, err)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("plugin %s: %s is not an executable file", name, path)
	}
	return path, nil
}

// Client returns the live client of a stage, relaunching its plugin first if
// the process has exited, so the request after a crash succeeds.
func (s *Supervisor) Client(ctx context.Context, stageName string) (*sdkplugin.Client, error) {
	s.mu.RLock()
	sl := s.slots[stageName]
	s.mu.RUnlock()
	if sl == nil {
		return nil, stage.Errorf(stage.CodeUnavailable, "stage %s is not configured", stageName)
	}
	c, restarted, err := sl.live(ctx)
	if restarted {
		s.onRestart(sl.spec.Plugin)
	}
	return c, err
}

// Plugin returns the plugin name serving a stage.
func (s *Supervisor) Plugin(stageName string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if sl := s.slots[stageName]; sl != nil {
		return sl.spec.Plugin
	}
	return ""
}

// Capabilities returns what a stage's plugin declared in Configure.
func (s *Supervisor) Capabilities(stageName string) []string {
	s.mu.RLock()
	sl := s.slots[stageName]
	s.mu.RUnlock()
	if sl == nil {
		return nil
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return sl.info.Capabilities
}

// Info returns what each plugin reported from Configure, by stage.
func (s *Supervisor) Info() map[string]stage.Info {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]stage.Info{}
	for name, sl := range s.slots {
		sl.mu.Lock()
		out[name] = sl.info
		sl.mu.Unlock()
	}
	return out
}

// Status is one plugin's state for /readyz and `mdpress plugins check`.
type Status struct {
	Stage    string `json:"stage"`
	Plugin   string `json:"plugin"`
	Healthy  bool   `json:"healthy"`
	Pid      int    `json:"pid,omitempty"`
	Restarts int    `json:"restarts"`
	Error    string `json:"error,omitempty"`
}

// Status reports every plugin, in stage order.
func (s *Supervisor) Status() []Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Status, 0, len(s.slots))
	for _, sl := range s.slots {
		out = append(out, sl.status())
	}
	order := map[string]int{}
	for i, n := range stage.Names {
		order[n] = i
	}
	sort.Slice(out, func(i, j int) bool { return order[out[i].Stage] < order[out[j].Stage] })
	return out
}

// Ready is nil when every plugin is running and healthy.
func (s *Supervisor) Ready() error {
	for _, st := range s.Status() {
		if !st.Healthy {
			return fmt.Errorf("stage %s (%s) is not ready", st.Stage, st.Plugin)
		}
	}
	return nil
}

// Run health-checks the plugins until ctx ends, relaunching any that has
// exited or failed three checks in a row.
func (s *Supervisor) Run(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.RLock()
		slots := make([]*slot, 0, len(s.slots))
		for _, sl := range s.slots {
			slots = append(slots, sl)
		}
		s.mu.RUnlock()
		for _, sl := range slots {
			if sl.check(ctx, s.interval) {
				s.onRestart(sl.spec.Plugin)
			}
		}
	}
}

// Stop ends every plugin process. It waits for graceful exits briefly, then
// kills.
func (s *Supervisor) Stop() {
	s.mu.RLock()
	slots := make([]*slot, 0, len(s.slots))
	for _, sl := range s.slots {
		slots = append(slots, sl)
	}
	s.mu.RUnlock()
	var wg sync.WaitGroup
	for _, sl := range slots {
		wg.Add(1)
		go func() { defer wg.Done(); sl.stop() }()
	}
	wg.Wait()
}

// Each calls fn with every live plugin client, for gathering metrics.
func (s *Supervisor) Each(fn func(stageName, plugin string, c *sdkplugin.Client)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for name, sl := range s.slots {
		sl.mu.Lock()
		c, exited := sl.stub, sl.client == nil || sl.client.Exited()
		sl.mu.Unlock()
		if c != nil && !exited {
			fn(name, sl.spec.Plugin, c)
		}
	}
}

// slot is one stage's plugin process, relaunched in place.
type slot struct {
	spec  Spec
	path  string
	log   *slog.Logger
	level slog.Level

	mu       sync.Mutex
	client   *process
	stub     *sdkplugin.Client
	info     stage.Info
	healthy  bool
	failures int
	restarts int
	lastErr  string

	// A relaunch runs without the lock, so that a plugin that hangs at
	// start holds up neither /readyz nor shutdown: launching is closed
	// when it ends. After a failed launch the next waits backoff (1 s
	// doubling to a minute), so a plugin that crashes at start is not
	// relaunched on every request. stopped refuses relaunches once stop
	// has begun; a launch under way then kills what it started.
	launching chan struct{}
	backoff   time.Duration
	nextTry   time.Time
	stopped   bool
	// retiring is the process a relaunch is killing, until it is gone: a
	// frozen one takes killGrace, which a stop does not wait out.
	retiring *process

	// A process that exits within stableAfter of its start exited
	// early. The first early exit is relaunched at once (an OOM kill, a
	// bad document); from the second in a row the relaunch waits
	// backoff too, or a plugin that dies of its first moments' work is
	// relaunched every few hundred milliseconds for good. upSince is
	// when the process was installed; exitSeen marks its exit handled.
	upSince    time.Time
	earlyExits int
	exitSeen   bool

	// stat is the process's /proc/<pid>/stat, open for the life of the
	// process (nil without /proc); statBuf is what running reads it into.
	stat    *os.File
	statBuf [512]byte
}

// launch starts the plugin the first time, before anyone else uses the slot.
func (sl *slot) launch(ctx context.Context) error {
	l, err := sl.start(ctx)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if err != nil {
		sl.healthy, sl.lastErr = false, err.Error()
		return err
	}
	sl.install(l)
	return nil
}

// launched is a started, configured and healthy plugin process.
type launched struct {
	client *process
	stub   *sdkplugin.Client
	info   stage.Info
}

// start launches, configures and health-checks a process. It holds no
// lock: a plugin that hangs at start (go-plugin waits up to 15 s for its
// handshake, Configure up to 30 s) holds up only the requests that need it.
func (sl *slot) start(ctx context.Context) (launched, error) {
	cmd := exec.Command(sl.path)
	// Own process group: a terminal's Ctrl-C reaches the host only, which then
	// shuts plugins down in order. Parent death: the plugin goes with the host
	// even when the host is killed outright.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Env = append(os.Environ(), sdkplugin.LogLevelEnv+"="+sl.level.String())
	stderr := &stderrTail{}
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  sdkplugin.Handshake,
		Plugins:          sdkplugin.Map(sl.spec.Stage),
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		GRPCDialOptions:  sdkplugin.DialOptions(),
		Logger:           newHCLogger(sl.log),
		SyncStdout:       newStdioWriter(sl.log.With("stream", "stdout")),
		SyncStderr:       newStdioWriter(sl.log),
		Stderr:           stderr,
		StartTimeout:     15 * time.Second,
	})
	proc := &process{Client: client, cmd: cmd}
	fail := func(err error) (launched, error) {
		proc.Kill()
		return launched{}, fmt.Errorf("plugin %s (%s stage): %w", sl.spec.Plugin, sl.spec.Stage, err)
	}
	rpc, err := client.Client()
	if err != nil {
		// Kill waits until go-plugin has copied the last of the
		// plugin's stderr, which a plugin that exits at once wrote as
		// it went.
		proc.Kill()
		return fail(startError(err, stderr.reason()))
	}
	stderr.handshaken()
	raw, err := rpc.Dispense(sl.spec.Stage)
	if err != nil {
		return fail(fmt.Errorf("dispense: %w", err))
	}
	stub := raw.(*sdkplugin.Client)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := stub.CheckStage(cctx); err != nil {
		return fail(err)
	}
	// The host never reads a document tree, it only passes the parser's on
	// to the renderer: decoding it here would be pure cost.
	stub.RelayTrees()
	resp, err := stub.Configure(cctx, sl.spec.Config)
	if err != nil {
		return fail(fmt.Errorf("configure: %w", err))
	}
	if err := stub.Health(cctx); err != nil {
		return fail(fmt.Errorf("health: %w", err))
	}
	return launched{client: proc, stub: stub, info: resp.Info}, nil
}

// install makes a started process the slot's.
func (sl *slot) install(l launched) {
	sl.client, sl.stub, sl.info = l.client, l.stub, l.info
	sl.healthy, sl.failures, sl.lastErr = true, 0, ""
	// The backoff stays until the process proves stable (exitedLocked).
	sl.nextTry, sl.upSince, sl.exitSeen = time.Time{}, time.Now(), false
	sl.stat, _ = os.Open("/proc/" + strconv.Itoa(pid(l.client)) + "/stat")
	sl.log.Info("plugin ready", "stage", sl.spec.Stage, "pid", pid(l.client), "version", l.info.Version, "capabilities", l.info.Capabilities)
}

// live returns the running client, relaunching a dead process first (or
// waiting for the relaunch under way), within ctx. It reports whether it
// began a relaunch.
func (sl *slot) live(ctx context.Context) (*sdkplugin.Client, bool, error) {
	began := false
	sl.mu.Lock()
	for {
		if sl.stopped {
			sl.mu.Unlock()
			return nil, began, stage.Errorf(stage.CodeUnavailable, "a processing stage is unavailable: the host is stopping")
		}
		if ch := sl.launching; ch != nil {
			sl.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, began, stage.Wrap(stage.CodeUnavailable, ctx.Err(), "a processing stage is unavailable: its plugin is starting")
			}
			sl.mu.Lock()
			continue
		}
		if sl.running() {
			stub := sl.stub
			sl.mu.Unlock()
			return stub, began, nil
		}
		sl.exitedLocked()
		if began || time.Now().Before(sl.nextTry) {
			err := stage.Errorf(stage.CodeUnavailable, "a processing stage is unavailable")
			sl.mu.Unlock()
			return nil, began, err
		}
		sl.relaunchLocked("process exited")
		began = true
	}
}

// exitedLocked sets when a process found dead may be relaunched, once per
// process; the caller holds the lock.
func (sl *slot) exitedLocked() {
	if sl.client == nil || sl.exitSeen {
		return // never started, or handled
	}
	sl.exitSeen = true
	up := time.Since(sl.upSince)
	if up >= stableAfter {
		sl.earlyExits, sl.backoff = 0, 0
		return
	}
	sl.earlyExits++
	if sl.earlyExits < 2 {
		return
	}
	sl.backoff = min(max(2*sl.backoff, time.Second), time.Minute)
	sl.nextTry = time.Now().Add(sl.backoff)
	sl.healthy, sl.lastErr = false, "process exited soon after its start"
	sl.log.Error("plugin exited soon after its start again", "stage", sl.spec.Stage, "upFor", up.Round(time.Millisecond),
		"earlyExits", sl.earlyExits, "retryIn", sl.backoff)
}

// stableAfter is how long a process must live for its exit not to count
// as early. A variable for the tests, which cannot wait a minute.
var stableAfter = time.Minute

// relaunchLocked begins a relaunch in the background; the caller holds the
// lock. A failed one sets the time before the next.
func (sl *slot) relaunchLocked(why string) {
	sl.log.Warn("relaunching plugin", "stage", sl.spec.Stage, "reason", why)
	// The old process is killed outside the lock too: go-plugin asks it
	// to shut down and waits up to 2 s, and a wedged one is why it goes.
	old, oldStat := sl.client, sl.stat
	if old != nil && !sl.exitSeen && time.Since(sl.upSince) >= stableAfter {
		// Replaced alive (failing its checks) after a stable run: that run
		// proves the plugin stable as an exit after it would (exitedLocked),
		// or the next early exit counted the ones before it and waited out
		// their backoff, and a failed start doubled it.
		sl.earlyExits, sl.backoff = 0, 0
	}
	sl.client, sl.stub, sl.stat, sl.healthy = nil, nil, nil, false
	sl.restarts++
	done := make(chan struct{})
	sl.launching = done
	sl.retiring = old
	go func() {
		if old != nil {
			old.Kill()
		}
		if oldStat != nil {
			_ = oldStat.Close()
		}
		sl.mu.Lock()
		sl.retiring = nil
		sl.mu.Unlock()
		l, err := sl.start(context.Background())
		sl.mu.Lock()
		defer sl.mu.Unlock()
		defer close(done)
		sl.launching = nil
		switch {
		case err == nil && sl.stopped:
			l.client.Kill()
		case err == nil:
			sl.install(l)
		default:
			sl.backoff = min(max(2*sl.backoff, time.Second), time.Minute)
			sl.nextTry = time.Now().Add(sl.backoff)
			sl.healthy, sl.lastErr = false, err.Error()
			sl.log.Error("plugin relaunch failed", "stage", sl.spec.Stage, "retryIn", sl.backoff, "err", err)
		}
	}()
}

// check runs one health check and relaunches when needed; it reports
// whether it began a relaunch. The check itself holds no lock.
func (sl *slot) check(ctx context.Context, timeout time.Duration) bool {
	sl.mu.Lock()
	if sl.stopped || sl.launching != nil {
		sl.mu.Unlock()
		return false
	}
	if !sl.running() {
		defer sl.mu.Unlock()
		sl.exitedLocked()
		if time.Now().Before(sl.nextTry) {
			return false
		}
		sl.relaunchLocked("process exited")
		return true
	}
	stub := sl.stub
	sl.mu.Unlock()
	hctx, cancel := context.WithTimeout(ctx, timeout)
	err := stub.Health(hctx)
	cancel()
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if stub != sl.stub || sl.stopped {
		return false // relaunched or stopped meanwhile
	}
	if err == nil {
		sl.healthy, sl.failures, sl.lastErr = true, 0, ""
		return false
	}
	if ctx.Err() != nil {
		return false
	}
	sl.healthy, sl.lastErr = false, stage.SafeMessage(err)
	if sdkplugin.Answered(err) && stage.CodeOf(err) == stage.CodeUnavailable {
		// Alive, and waiting on something it depends on (the account
		// database, the bucket). A relaunch would not bring that back; it
		// would cut the calls in flight, and its Configure would fail for
		// the same reason, so that the retries' backoff kept the stage
		// down for up to a minute after the dependency came back.
		sl.failures = 0
		sl.log.Warn("plugin health check failed", "stage", sl.spec.Stage, "dependency", true, "err", err)
		return false
	}
	sl.failures++
	sl.log.Warn("plugin health check failed", "stage", sl.spec.Stage, "failures", sl.failures, "err", err)
	if sl.failures >= 3 {
		sl.relaunchLocked("health checks failing")
		return true
	}
	return false
}

// running reports whether the plugin process is alive. go-plugin learns of
// an exit only once it reaps the child, so a process killed a moment ago
// still looks alive to it; /proc knows at once (a zombie is dead). Neither
// waitid nor a pidfd would do: they report a Go process whose threads are
// still exiting as alive, after it has closed its sockets. This runs before
// every stage call, so the stat file stays open and each check is one
// read, not the six system calls of opening it (4% of the host's CPU in a
// conversion).
func (sl *slot) running() bool {
	if sl.client == nil || sl.client.Exited() {
		return false
	}
	if sl.stat == nil {
		return true // no /proc here: trust go-plugin
	}
	n, _ := sl.stat.ReadAt(sl.statBuf[:], 0)
	if n == 0 {
		return false // reaped
	}
	return !exiting(sl.statBuf[:n])
}

// pfExiting is PF_EXITING in the flags of /proc/PID/stat, and sigKill
// SIGKILL's bit in its pending signals.
const (
	pfExiting = 0x4
	sigKill   = 1 << (syscall.SIGKILL - 1)
)

// exiting reports whether a /proc/PID/stat line shows a process that is
// dying: a zombie, one the kernel has set exiting, or one with a SIGKILL
// pending. A killed plugin closes its socket, and so fails the request it
// was serving, from within its exit; the state turns to Z only at the end
// of it, 25 to 35 ms after a SIGKILL for a process of 400 MiB on this
// machine. Reading the state alone, the request after the failed one,
// arriving in between, was handed the dead process's client and failed
// too. Before the exit begins, the kill waits for the plugin's threads to
// get a CPU, which on a loaded machine takes milliseconds; its socket is
// open then, so a request sent to it is taken and never answered. The
// kernel adds the SIGKILL to each thread's own pending set as it is sent,
// and the leader's is in the same line.
func exiting(stat []byte) bool {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return false // not a stat line: trust go-plugin
	}
	// After the name: state, then flags (the 7th field) and the pending
	// signals (the 29th). Split by hand: this runs for every stage of
	// every request.
	rest := stat[end+1:]
	for i := 0; i <= 28; i++ {
		rest = bytes.TrimLeft(rest, " ")
		field := rest
		if sp := bytes.IndexByte(rest, ' '); sp >= 0 {
			field, rest = rest[:sp], rest[sp:]
		} else {
			rest = nil
		}
		switch {
		case len(field) == 0:
			return false
		case i == 0 && len(field) == 1 && (field[0] == 'Z' || field[0] == 'X'):
			return true
		case i == 6:
			if flags, ok := decimal(field); !ok || flags&pfExiting != 0 {
				return ok
			}
		case i == 28:
			pending, ok := decimal(field)
			return ok && pending&sigKill != 0
		}
	}
	return false
}

// decimal parses an unsigned decimal field of a stat line.
func decimal(field []byte) (uint64, bool) {
	var n uint64
	for _, c := range field {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

func (sl *slot) status() Status {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	st := Status{Stage: sl.spec.Stage, Plugin: sl.spec.Plugin, Restarts: sl.restarts, Error: sl.lastErr}
	if sl.launching != nil {
		st.Error = "relaunching"
		return st
	}
	if sl.running() {
		st.Healthy = sl.healthy
		st.Pid = pid(sl.client)
	} else if st.Error == "" {
		st.Error = "process not running"
	}
	return st
}

// stop kills the process and refuses relaunches from then on. A launch
// under way kills what it started when it ends (and the plugin's
// parent-death signal takes it when the host exits first): stop does not
// wait for a plugin that hangs at start.
func (sl *slot) stop() {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.stopped = true
	sl.killLocked()
	if sl.retiring != nil {
		// The relaunch would kill it after the grace, but the host exits
		// first, and a frozen process does not act on the parent-death
		// signal: it would outlive the host.
		sl.retiring.killGroup()
	}
}

func (sl *slot) killLocked() {
	if sl.client != nil {
		sl.client.Kill()
	}
	if sl.stat != nil {
		_ = sl.stat.Close()
		sl.stat = nil
	}
	sl.healthy = false
}

func pid(c *process) int {
	if rc := c.ReattachConfig(); rc != nil {
		return rc.Pid
	}
	return 0
}

// process is a plugin's go-plugin client with the command it runs.
type process struct {
	*goplugin.Client
	cmd *exec.Cmd
}

// killGrace bounds go-plugin's Kill, whose own grace is 2 s after the
// plugin has answered its request to shut down.
const killGrace = 5 * time.Second

// Kill is go-plugin's Kill, bounded. That one asks the plugin over gRPC to
// shut down, with no deadline, and then waits until the plugin's output
// closes: a plugin whose process does not run (stopped, frozen in its
// cgroup) never answers, and a child holding its stderr (a shell wrapper's)
// keeps the output open, so Kill never returned, holding up the relaunch,
// or the host's exit, for good. Past the grace the plugin's process group
// (its own, from Setpgid) is killed here, which ends both waits.
func (p *process) Kill() {
	// go-plugin's socket file is unlinked by the plugin when it exits on
	// its own; one killed outright (SIGKILL, the OOM killer) left it in the
	// temp dir, one more file for every crash.
	if rc := p.ReattachConfig(); rc != nil && rc.Addr != nil && rc.Addr.Network() == "unix" {
		defer removeSocket(rc.Addr.String())
	}
	done := make(chan struct{})
	go func() {
		p.Client.Kill()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-time.After(killGrace):
	}
	p.killGroup()
	<-done
}

// killGroup SIGKILLs the plugin's process group. Only until Kill has
// returned: while it waits, a process of the group lives (the frozen
// plugin, or the child holding its output), so the group's id is still
// its own.
func (p *process) killGroup() {
	if p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// removeSocket removes the Unix socket file at path, if one is still there.
func removeSocket(path string) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		_ = os.Remove(path)
	}
}
