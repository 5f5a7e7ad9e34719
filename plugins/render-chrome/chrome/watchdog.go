package chrome

import "time"

// memWatchEvery is how often the watchdog measures a browser with renders
// running: a render that decodes a 20000x20000 image grows the browser by
// about a gigabyte a second.
const memWatchEvery = 150 * time.Millisecond

// watchMemory kills a browser whose memory passes the render bound while
// renders run there, until the engine closes. The checks before and after
// renders bound what a browser keeps; this bounds what one render takes,
// which the checks would see only once it is done and the memory spent.
// Killing frees the memory at once; the renders there fail (the host
// refunds them), and the next render starts a new browser, as after a
// crash. A measure reads /proc, about 2 ms; with no render running there
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
	if err != nil || rss <= limit || g.overMemory.Swap(true) {
		return
	}
	e.mu.Lock()
	e.retireLocked(g)
	e.mu.Unlock()
	e.log.Warn("browser over its memory bound while rendering; killing it", "rssMB", rss>>20, "limitMB", limit>>20)
	e.stats.restarts.Add(1)
	e.kill(g)
}
