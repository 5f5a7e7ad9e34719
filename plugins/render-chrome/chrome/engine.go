package chrome

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

var (
	// errGone means the browser a render waited on went away; the render
	// may try the next one.
	errGone   = errors.New("browser gone")
	errClosed = errors.New("renderer closed")
	errLaunch = errors.New("browser did not start")
)

const (
	launchTimeout  = 30 * time.Second
	openTabTimeout = 30 * time.Second
	memCheckEvery  = 2 * time.Second
	hangCheck      = 3 * time.Second
)

// engine owns the browser and its tabs. One browser serves at a time (a
// generation); a new one replaces it when it dies, hangs or grows too big,
// and an old one is killed once its last render is done.
type engine struct {
	cfg      Config
	launchOp launchOptions
	gate     *gate
	log      *slog.Logger
	stats    *stats
	hole     *blackhole

	root context.Context // the browsers' lives
	stop context.CancelFunc

	// slots admits Tabs renders at once, across generations.
	slots chan struct{}

	mu       sync.Mutex
	cur      *generation
	gens     map[*generation]struct{} // every generation not yet killed
	closed   bool
	checking atomic.Bool // a memory check runs
	lastMem  atomic.Int64
	memEvery time.Duration // memCheckEvery but in tests
	// renderMemLimit is Config.MaxRenderMemoryMB in bytes; tests change it.
	renderMemLimit atomic.Int64
}

// generation is one browser and its pool of tabs.
type generation struct {
	ready chan struct{} // closed when the launch ended; then proc or err is set
	proc  *process
	err   error

	idle    chan *tab     // tabs ready to use; never more than Tabs
	retired chan struct{} // closed when no new render may start here
	live    int           // tabs open or opening, under engine.mu
	active  int           // renders holding a tab, under engine.mu
	killed  sync.Once
	// stopping is set before we kill the browser ourselves; a browser that
	// goes away without it crashed.
	stopping atomic.Bool
	// printing counts the renders between setting their document and
	// the end of its printing, which the memory watchdog watches.
	printing atomic.Int64
	// jobs are those renders, under engine.mu, so that the watchdog can
	// tell the one it blames from those it fails beside it.
	jobs map[*printJob]struct{}
	// stoppedAt is when the watchdog last stopped a render here for its
	// memory, stoppedRSS the browser's memory then, and stopHeld whether
	// the memory has stayed over the bound since; only the watchdog uses
	// them.
	stoppedAt  time.Time
	stoppedRSS int64
	stopHeld   bool
	// overMemory is set before the watchdog kills the browser, so that
	// the renders it fails say why.
	overMemory atomic.Bool
	// asking is the hang check waiting on the browser, if any, under
	// engine.mu.
	asking *hangAnswer
}

func (g *generation) isRetired() bool {
	select {
	case <-g.retired:
		return true
	default:
		return false
	}
}

// usable reports whether new renders may start on g without waiting.
func (g *generation) usable() bool {
	select {
	case <-g.ready:
		return g.err == nil && g.proc.alive() && !g.isRetired()
	default:
		return !g.isRetired() // still launching
	}
}

// admit waits for a render slot. It refuses at once when Queue renders wait
// already.
func (e *engine) admit(ctx context.Context) (release func(), err error) {
	release = func() { <-e.slots }
	select {
	case e.slots <- struct{}{}:
		return release, nil
	default:
	}
	if e.stats.waiting.Add(1) > int64(e.cfg.Queue) {
		e.stats.waiting.Add(-1)
		e.stats.busy.Add(1)
		return nil, stage.Errorf(stage.CodeBusy, "the renderer is busy; try again later")
	}
	defer e.stats.waiting.Add(-1)
	select {
	case e.slots <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// current returns the serving browser, launching one when there is none.
func (e *engine) current(ctx context.Context) (*generation, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, errClosed
	}
	g := e.cur
	if g == nil || !g.usable() {
		g = e.startLocked()
	}
	e.mu.Unlock()
	select {
	case <-g.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if g.err != nil {
		e.mu.Lock()
		if e.cur == g {
			e.cur = nil // the next call tries again
		}
		e.mu.Unlock()
		return nil, g.err
	}
	return g, nil
}

// startLocked launches a new generation in the background and makes it
// current. The old one, if any, stops taking renders.
func (e *engine) startLocked() *generation {
	if old := e.cur; old != nil {
		e.retireLocked(old)
	}
	g := &generation{
		ready:   make(chan struct{}),
		idle:    make(chan *tab, e.cfg.Tabs),
		retired: make(chan struct{}),
		jobs:    make(map[*printJob]struct{}),
	}
	e.cur = g
	e.gens[g] = struct{}{}
	e.stats.launches.Add(1)
	go func() {
		ctx, cancel := context.WithTimeout(e.root, launchTimeout)
		defer cancel()
		start := time.Now()
		g.proc, g.err = launch(ctx, e.root, e.launchOp)
		if g.err != nil {
			e.log.Error("browser start failed", "err", g.err)
			g.err = fmt.Errorf("%w: %w", errLaunch, g.err)
			close(g.ready)
			e.forget(g)
			return
		}
		e.log.Info("browser started", "pid", g.proc.pgid, "took", time.Since(start).Round(time.Millisecond).String())
		close(g.ready)
		go e.watch(g)
	}()
	return g
}

// watch cleans up after a browser that went away, and counts it as a crash
// when nobody asked it to go.
func (e *engine) watch(g *generation) {
	<-g.proc.ctx.Done()
	e.mu.Lock()
	unexpected := !g.stopping.Load()
	if e.cur == g {
		e.cur = nil
	}
	e.retireLocked(g)
	e.mu.Unlock()
	if unexpected {
		e.stats.crashes.Add(1)
		e.log.Warn("browser died; the next render starts a new one", "pid", g.proc.pgid)
	}
	e.kill(g)
}

func (e *engine) retireLocked(g *generation) {
	if !g.isRetired() {
		close(g.retired)
	}
	if e.cur == g {
		e.cur = nil
	}
}

// kill stops g's browser for good, and reports whether this call killed
// it running. A browser that had died of itself is not marked as stopped
// by us: the watcher counts it as a crash, also when a render that found
// it dead retired it and the last render's end killed it before the
// watcher ran. Only the first call looks: checks that find a hung browser
// at once (health, the hang checks of renders that timed out) all kill
// it, and each counted a crash of its own when each looked before the
// first had killed.
func (e *engine) kill(g *generation) bool {
	<-g.ready
	running := false
	g.killed.Do(func() {
		if g.proc != nil {
			running = !g.proc.exited()
			if running {
				g.stopping.Store(true)
			}
			g.proc.kill()
		}
		e.forget(g)
	})
	return running
}

func (e *engine) forget(g *generation) {
	e.mu.Lock()
	delete(e.gens, g)
	e.mu.Unlock()
}

// checkMemoryBefore retires g before a render takes a tab there when its
// browser's memory is past the bound, and reports whether it did: a
// browser grown by earlier renders takes no new work, and the render
// starts the next one. The render waits for the measure when one is due
// (reading /proc, about 2 ms, at most every memCheckEvery across renders).
func (e *engine) checkMemoryBefore(g *generation) bool {
	return e.claimMemoryCheck() && e.retireIfBig(g)
}

// checkMemoryAfter does the same after a render, off the render's time, so
// that a browser the render grew does not idle at that size.
func (e *engine) checkMemoryAfter(g *generation) {
	// A retired browser is going: the check is left to the current one.
	if !g.isRetired() && e.claimMemoryCheck() {
		go e.retireIfBig(g)
	}
}

// claimMemoryCheck reports whether a memory check is due and, if so,
// claims it; retireIfBig releases it.
func (e *engine) claimMemoryCheck() bool {
	now := time.Now().UnixNano()
	if e.cfg.MaxBrowserMemoryMB == 0 || now-e.lastMem.Load() < int64(e.memEvery) || !e.checking.CompareAndSwap(false, true) {
		return false
	}
	e.lastMem.Store(now)
	return true
}

// retireIfBig replaces the browser when its memory passes the bound: g
// takes no new render and is killed once its renders are done. A browser
// retired already (by a check, a crash or a hang) is left alone: it is
// going, and counting or logging it again would report a restart that
// does not happen. The kill runs apart, as give's does: a render that
// found the browser big waits for the next one, not for the old one's
// profile to be removed.
func (e *engine) retireIfBig(g *generation) bool {
	defer e.checking.Store(false)
	if g.isRetired() {
		return false
	}
	limit := int64(e.cfg.MaxBrowserMemoryMB) << 20
	rss, err := g.proc.rss()
	if err != nil || rss <= limit {
		return false
	}
	e.mu.Lock()
	if g.isRetired() {
		e.mu.Unlock()
		return false
	}
	e.retireLocked(g)
	drain := g.active == 0
	e.mu.Unlock()
	e.log.Info("browser over its memory bound; starting a new one", "rssMB", rss>>20, "limitMB", limit>>20)
	e.stats.restarts.Add(1)
	if drain {
		go e.kill(g)
	}
	return true
}

// hangAnswer is the outcome of asking a browser whether it answers: done
// closes when it has, or has been killed for not answering.
type hangAnswer struct {
	done chan struct{}
	err  error
}

// checkHung asks g's browser to answer, and kills it when it does not
// within hangCheck, so that a wedged browser costs one timeout and not
// every later render. Checks that come while one waits share its
// question: each health check and each render that timed out left one of
// its own waiting on a slow browser, as many as came in those seconds.
func (e *engine) checkHung(g *generation) *hangAnswer {
	e.mu.Lock()
	defer e.mu.Unlock()
	if a := g.asking; a != nil {
		return a
	}
	a := &hangAnswer{done: make(chan struct{})}
	g.asking = a
	go func() {
		ctx, cancel := context.WithTimeout(g.proc.ctx, hangCheck)
		defer cancel()
		_, err := g.proc.version(ctx)
		if err != nil && e.kill(g) {
			e.log.Warn("browser does not answer; killing it", "err", err)
			e.stats.crashes.Add(1)
		}
		e.mu.Lock()
		g.asking = nil
		e.mu.Unlock()
		a.err = err
		close(a.done)
	}()
	return a
}

// close kills every browser.
func (e *engine) close() {
	e.mu.Lock()
	e.closed = true
	gens := make([]*generation, 0, len(e.gens))
	for g := range e.gens {
		gens = append(gens, g)
		e.retireLocked(g)
	}
	e.mu.Unlock()
	for _, g := range gens {
		e.kill(g)
	}
	e.stop()
	e.hole.close()
}
