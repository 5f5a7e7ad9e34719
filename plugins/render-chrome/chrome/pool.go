package chrome

import (
	"context"
	"fmt"
	"time"
)

// take returns a tab of g for one render.
func (e *engine) take(ctx context.Context, g *generation) (*tab, error) {
	e.mu.Lock()
	if g.isRetired() || !g.proc.alive() {
		e.mu.Unlock()
		return nil, errGone
	}
	g.active++
	select {
	case t := <-g.idle:
		e.mu.Unlock()
		return e.checkIdle(g, t)
	default:
	}
	if g.live < e.cfg.Tabs {
		g.live++
		e.mu.Unlock()
		t, err := openTab(ctx, g.proc, e.gate, e.cfg.JavaScript)
		if err != nil {
			// chromedp fails the call as soon as the connection drops,
			// and cancels the browser's context only once it has reaped
			// the process: /proc tells the death at once.
			dead := ctx.Err() == nil && g.proc.exited()
			e.mu.Lock()
			g.live--
			if dead {
				e.retireLocked(g) // the next render starts a new browser
			}
			e.mu.Unlock()
			e.done(g)
			if dead {
				// Nothing of the document reached the dead browser: the
				// render may go to the next one.
				return nil, fmt.Errorf("%w: %w", errGone, err)
			}
			return nil, err
		}
		return t, nil
	}
	e.mu.Unlock()
	// Every tab is in use by a render or on its way: one comes back soon.
	select {
	case t := <-g.idle:
		return e.checkIdle(g, t)
	case <-ctx.Done():
		e.done(g)
		return nil, ctx.Err()
	case <-g.retired:
		e.done(g)
		return nil, errGone
	}
}

// checkIdle hands out t, an idle tab of g, unless g's browser has died
// and chromedp has not noticed yet: the render would fail there for a
// browser its document never reached. Nothing of the document has left
// us, so the render may go to the next browser, as it does once the
// browser is known gone. A document that kills the browser has been sent
// by then, and fails as it did; it is not retried.
func (e *engine) checkIdle(g *generation, t *tab) (*tab, error) {
	if !g.proc.exited() {
		return t, nil
	}
	e.mu.Lock()
	g.live--
	// No render goes there any more, and the next starts a new browser
	// without waiting for chromedp; the watcher counts the crash.
	e.retireLocked(g)
	e.mu.Unlock()
	go t.close()
	e.done(g)
	return nil, errGone
}

// done ends a render's hold on g without a tab to give back.
func (e *engine) done(g *generation) {
	e.mu.Lock()
	g.active--
	drain := g.isRetired() && g.active == 0
	e.mu.Unlock()
	if drain {
		go e.kill(g)
	}
}

// give returns a tab after a render. A tab that failed, timed out or served
// its quota is closed and replaced, never reused: it may still be busy.
func (e *engine) give(g *generation, t *tab, ok bool) {
	e.mu.Lock()
	g.active--
	healthy := !g.isRetired() && g.proc.alive()
	reuse := ok && healthy && t.renders < e.cfg.RecycleAfter
	replace := false
	if !reuse {
		g.live--
		if healthy && g.live < e.cfg.Tabs {
			g.live++
			replace = true
		}
	}
	drain := g.isRetired() && g.active == 0
	e.mu.Unlock()

	if reuse {
		g.idle <- t
	} else {
		e.stats.recycled.Add(1)
		go t.close()
	}
	if replace {
		go e.replaceTab(g)
	}
	if drain {
		go e.kill(g)
	}
}

// replaceTab opens a tab in the background so that the next render does not
// wait for it. A browser that cannot open tabs is broken: renders waiting
// for a tab would wait for nothing, so it is killed and the next render
// starts another.
func (e *engine) replaceTab(g *generation) {
	var err error
	died := false
	for attempt := range 3 {
		if attempt > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(g.proc.ctx, openTabTimeout)
		var t *tab
		t, err = openTab(ctx, g.proc, e.gate, e.cfg.JavaScript)
		cancel()
		if err == nil {
			g.idle <- t
			return
		}
		if died = g.proc.exited(); died {
			break
		}
	}
	e.mu.Lock()
	g.live--
	e.mu.Unlock()
	// A browser that died is the watcher's to count and clean up.
	if !died && e.kill(g) {
		e.log.Error("browser cannot open tabs; killing it", "err", err)
		e.stats.crashes.Add(1)
	}
}
