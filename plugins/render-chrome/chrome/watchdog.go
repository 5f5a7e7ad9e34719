package chrome

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
)

// memWatchEvery is how often the watchdog measures a browser with renders
// running: a render that decodes a 20000x20000 image grows the browser by
// about a gigabyte a second.
const memWatchEvery = 150 * time.Millisecond

// stopGrace is how long the memory has to fall back under the bound after
// the watchdog stopped a render; still over it then, the browser is
// killed. Stopping a render of 1.4 GB freed it within 100 ms on a quiet
// machine; on a loaded one its renderer still held 450-740 MB after
// 190 ms.
const stopGrace = 3 * time.Second

// watchMemory stops what passes the render bound while renders run on a
// browser, until the engine closes. The checks before and after renders
// bound what a browser keeps; this bounds what one render takes, which
// the checks would see only once it is done and the memory spent. A
// measure reads /proc, about 2 ms; with no render running there is none.
func (e *engine) watchMemory() {
	tick := time.NewTicker(memWatchEvery)
	defer tick.Stop()
	// held are the browsers where a stopped render's memory is awaited.
	// They are watched until it is back under the bound or the grace
	// ends, also when nothing prints there any more: a render stopped
	// alone leaves none printing, and its browser went unwatched with the
	// memory still over the bound, and kept the stop to hold against a
	// render that passed the bound minutes later.
	held := map[*generation]bool{}
	for {
		select {
		case <-e.root.Done():
			return
		case <-tick.C:
		}
		gens := e.rendering()
		for g := range held {
			if !slices.Contains(gens, g) {
				gens = append(gens, g)
			}
		}
		clear(held)
		for _, g := range gens {
			if e.checkRenderMemory(g) {
				held[g] = true
			}
		}
	}
}

// rendering returns the browsers that documents are printing on. Tabs
// being opened do not count: no document grows a browser there.
func (e *engine) rendering() []*generation {
	e.mu.Lock()
	defer e.mu.Unlock()
	var gens []*generation
	for g := range e.gens {
		if g.printing.Load() > 0 {
			gens = append(gens, g)
		}
	}
	return gens
}

// checkRenderMemory stops the render blamed for a browser past the render
// bound, which leaves the browser and the other renders there alone. When
// that does not bring it back under the bound, it kills the browser: that
// frees the memory at once, whatever holds it. It reports whether a
// stopped render's memory is still awaited on g.
func (e *engine) checkRenderMemory(g *generation) bool {
	// Only this goroutine reads and writes the stop's fields.
	limit := e.renderMemLimit.Load()
	if limit <= 0 || !g.proc.alive() || g.overMemory.Load() {
		g.stopHeld = false
		return false
	}
	rss, err := g.proc.rss()
	if err != nil {
		return g.stopHeld
	}
	if rss <= limit {
		g.stopHeld = false
		return false
	}
	if !g.stopHeld {
		if e.stopCulprit(g, rss, limit) {
			g.stoppedAt, g.stoppedRSS, g.stopHeld = time.Now(), rss, true
			return true
		}
		e.killForMemory(g, rss, limit)
		return false
	}
	if time.Since(g.stoppedAt) >= stopGrace {
		// Stopping the render did not bring the browser back under the
		// bound: what holds the memory is no render growing it, and
		// blaming another would fail a document that did nothing.
		e.killForMemory(g, rss, limit)
		return false
	}
	// A render stopped lately: its compositor may have been too small
	// to kill then, and decodes on without a tab.
	if pid, mem, _ := biggestCompositor(g.proc.pgid); pid > 0 && mem >= limit/4 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		e.log.Warn("killed the print compositor of a stopped render", "rssMB", rss>>20, "limitMB", limit>>20, "compositorMB", mem>>20)
		return true
	}
	// The stopped render's memory is on its way back, which a loaded
	// machine takes a while over: the browser goes only for what grows
	// it beside that render meanwhile.
	if rss > g.stoppedRSS+limit/4 && e.othersPrinting(g) {
		e.killForMemory(g, rss, limit)
		return false
	}
	return true
}

// othersPrinting reports whether a render the watchdog did not blame
// prints on g.
func (e *engine) othersPrinting(g *generation) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for j := range g.jobs {
		if !j.culprit.Load() {
			return true
		}
	}
	return false
}

// stopCulprit closes the tab of the render blamed for g's memory, which
// fails that render at once and ends its renderer, and kills the print
// compositor holding the memory: closed, the tab's print job left its
// compositor decoding on, 2.5 GB a second later. It reports whether it
// stopped a render.
func (e *engine) stopCulprit(g *generation, rss, limit int64) bool {
	pid, mem, age := biggestCompositor(g.proc.pgid)
	// Every print job has a compositor of its own; the others hold tens
	// of megabytes. One this big is the culprit's.
	big := pid > 0 && mem >= limit/4
	e.mu.Lock()
	j := e.blameLocked(g, age, big && age > 0)
	e.mu.Unlock()
	if j == nil || !e.stopJob(g, j) {
		return false
	}
	if big {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	} else {
		mem = 0
	}
	e.log.Warn("render over the browser's memory bound; stopping it", "rssMB", rss>>20, "limitMB", limit>>20,
		"printingFor", time.Since(j.start).Round(time.Millisecond).String(), "compositorMB", mem>>20, "requestId", j.requestID)
	e.stats.memStopped.Add(1)
	return true
}

// stopJob closes the tab of j, blamed under the lock, and ends j's wait.
// The render may have ended since the blame, its PDF printed: its tab,
// which Render does not give back for reuse, may be closed already, and
// that is no reason to kill the browser. It reports false when the tab
// does not close while j still prints.
func (e *engine) stopJob(g *generation, j *printJob) bool {
	ctx, cancel := context.WithTimeout(g.proc.ctx, time.Second)
	defer cancel()
	if _, err := cdp.Call(ctx, g.proc.browser, target.CloseTarget, target.CloseTargetParams{TargetID: j.tab.target.TargetID}); err != nil {
		e.mu.Lock()
		_, printing := g.jobs[j]
		e.mu.Unlock()
		if printing {
			e.log.Warn("cannot close the tab of a render over the memory bound", "err", err)
			return false
		}
	}
	j.stop()
	return true
}

// killForMemory kills g. The render blamed already, if any, fails; the
// others printing there are retried on the next browser.
func (e *engine) killForMemory(g *generation, rss, limit int64) {
	e.mu.Lock()
	// Under the lock the blame was set under too: a render that sees
	// overMemory also sees whether it is the culprit.
	g.overMemory.Store(true)
	// A browser retired already is going: by the browser bound's check,
	// which counted the restart, or dead, or closed with the engine. This
	// kill only hastens it.
	counted := g.isRetired()
	e.retireLocked(g)
	printing := len(g.jobs)
	e.mu.Unlock()
	e.log.Warn("browser over its memory bound while rendering; killing it", "rssMB", rss>>20, "limitMB", limit>>20,
		"printing", printing)
	if !counted {
		e.stats.restarts.Add(1)
	}
	e.kill(g)
}

// printJob is one render printing on a browser, as the watchdog sees it.
type printJob struct {
	start time.Time
	tab   *tab
	// requestID names the render in the watchdog's lines, which it writes
	// outside the render's call.
	requestID string
	// stop ends the render's wait: one stalled on a remote image does
	// not notice its tab closing.
	stop context.CancelFunc
	// culprit is set on the render the watchdog blames for the browser's
	// memory, before it stops the render or kills the browser.
	culprit atomic.Bool
}

// beginPrint counts a render as printing on g, on tab t, until endPrint;
// stop ends the render.
func (e *engine) beginPrint(ctx context.Context, g *generation, t *tab, stop context.CancelFunc) *printJob {
	j := &printJob{start: time.Now(), tab: t, stop: stop, requestID: sdkplugin.RequestID(ctx)}
	// The tab's last document's, until the render sets the new one: a
	// blame in between would take this render for printing since then.
	t.printAt.Store(0)
	e.mu.Lock()
	g.jobs[j] = struct{}{}
	e.mu.Unlock()
	g.printing.Add(1)
	return j
}

func (e *engine) endPrint(g *generation, j *printJob) {
	g.printing.Add(-1)
	e.mu.Lock()
	delete(g.jobs, j)
	e.mu.Unlock()
}

// compositorMatch is how far apart a print's start and its compositor's
// may be: the compositor starts within milliseconds of the print, and
// /proc dates a process to 10 ms.
const compositorMatch = 250 * time.Millisecond

// blameLocked marks the render that grew g's memory and returns it, or
// nil when no render runs on g. A document's images are decoded by the print
// compositor, a process per print job that names no tab; the render is
// the one whose printing began as the compositor holding the memory
// started, when compositorAge (how long ago it started) is known and one
// began within compositorMatch of it. Otherwise it is the render printing
// longest: a render reaches the bound only after printing for a while,
// where an ordinary document prints in well under a second. A render
// still loading is blamed only when none prints: images are decoded as
// they print, and the render that began first is often one held loading
// by a slow remote image beside the one that grows the browser, whose
// compositor was still too small to match when the bound was passed.
func (e *engine) blameLocked(g *generation, compositorAge time.Duration, known bool) *printJob {
	var culprit *printJob
	if known {
		best := compositorMatch
		for j := range g.jobs {
			at := j.tab.printAt.Load()
			if at == 0 {
				continue // still loading: no compositor yet
			}
			d := time.Since(time.Unix(0, at)) - compositorAge
			if d < 0 {
				d = -d
			}
			if d <= best {
				culprit, best = j, d
			}
		}
	}
	if culprit == nil {
		var since int64 // when the culprit's printing began; 0 while loading
		for j := range g.jobs {
			at := j.tab.printAt.Load()
			switch {
			case culprit == nil,
				at != 0 && (since == 0 || at < since),
				at == 0 && since == 0 && j.start.Before(culprit.start):
				culprit, since = j, at
			}
		}
	}
	if culprit != nil {
		culprit.culprit.Store(true)
	}
	return culprit
}

// biggestCompositor returns the print compositor of process group pgid
// that holds the most memory (anonymous and shared), that memory in
// bytes, and how long ago it started.
func biggestCompositor(pgid int) (pid int, mem int64, age time.Duration) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0, 0
	}
	var started []byte
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil || statPgrp(stat) != pgid {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte("--utility-sub-type=printing.mojom.PrintCompositor")) {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil || dying(stat, status) {
			continue // killed already: its memory is on its way back
		}
		if m := (statusKB(status, "RssAnon:") + statusKB(status, "RssShmem:")) << 10; m > mem {
			pid, mem, started = p, m, statField(stat, 19)
		}
	}
	return pid, mem, processAge(started)
}

// processAge turns the start time of /proc/PID/stat, in clock ticks
// since boot (USER_HZ, 100 on Linux), into how long ago that was, by
// /proc/uptime; 0 when either cannot be read.
func processAge(started []byte) time.Duration {
	ticks, err := strconv.ParseInt(string(started), 10, 64)
	if err != nil {
		return 0
	}
	up, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f := bytes.Fields(up)
	if len(f) == 0 {
		return 0
	}
	secs, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil {
		return 0
	}
	return time.Duration(secs*float64(time.Second)) - time.Duration(ticks)*(time.Second/100)
}
