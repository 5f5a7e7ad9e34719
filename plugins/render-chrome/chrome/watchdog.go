package chrome

import (
	"sync/atomic"
	"time"
)

// memWatchEvery is how often the watchdog measures a browser with renders
// running: a render that decodes a 20000x20000 image grows the browser by
// about a gigabyte a second.
const memWatchEvery = 150 * time.Millisecond

// watchMemory kills a browser whose memory passes the render bound while
// renders run there, until the engine closes. The checks before and after
// renders bound what a browser keeps; this bounds what one render takes,
// which the checks would see only once it is done and the memory spent.
// Killing frees the memory at once; the render blamed for it fails (the
// host refunds it), the others printing there are retried once on the
// next browser, which the next render starts, as after a crash. A measure reads /proc, about 2 ms; with no render running there
// is none.
func (e *engine) watchMemory() {
	tick := time.NewTicker(memWatchEvery)
	defer tick.Stop()
	for {
		select {
		case <-e.root.Done():
			return
		case <-tick.C:
		}
		for _, g := range e.rendering() {
			e.killIfOverRenderBound(g)
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

func (e *engine) killIfOverRenderBound(g *generation) {
	limit := e.renderMemLimit.Load()
	if limit <= 0 || !g.proc.alive() {
		return
	}
	rss, err := g.proc.rss()
	if err != nil || rss <= limit {
		return
	}
	e.mu.Lock()
	if g.overMemory.Load() {
		e.mu.Unlock()
		return
	}
	// Blamed before overMemory is set: a render that sees overMemory
	// also sees whether it is the culprit.
	printedFor, others := e.blameLocked(g)
	g.overMemory.Store(true)
	e.retireLocked(g)
	e.mu.Unlock()
	e.log.Warn("browser over its memory bound while rendering; killing it", "rssMB", rss>>20, "limitMB", limit>>20,
		"blamedPrintingFor", printedFor.Round(time.Millisecond).String(), "printingBeside", others)
	e.stats.restarts.Add(1)
	e.kill(g)
}

// printJob is one render printing on a browser, as the watchdog sees it.
type printJob struct {
	start time.Time
	// culprit is set before the watchdog kills the browser, on the render
	// it blames; the others there are retried on the next browser.
	culprit atomic.Bool
}

// beginPrint counts a render as printing on g until endPrint.
func (e *engine) beginPrint(g *generation) *printJob {
	j := &printJob{start: time.Now()}
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

// blameLocked marks the render printing longest on g as the one whose
// memory the browser is killed for, and returns how long it printed and
// how many renders print beside it. Nothing tells which tab holds the
// memory: a document's images are decoded by the print compositor, a
// process per print job that names no tab, and killing that process alone
// left the render hanging (over 20 s) while the memory grew back. Time
// tells instead: a render reaches the bound only after printing for a
// while, where an ordinary document prints in well under a second. A long
// innocent document blamed in its place fails, as every render there
// failed before; the bomb, retried once, fails on the next browser.
func (e *engine) blameLocked(g *generation) (printedFor time.Duration, others int) {
	var culprit *printJob
	for j := range g.jobs {
		if culprit == nil || j.start.Before(culprit.start) {
			culprit = j
		}
	}
	if culprit == nil {
		return 0, 0
	}
	culprit.culprit.Store(true)
	return time.Since(culprit.start), len(g.jobs) - 1
}
