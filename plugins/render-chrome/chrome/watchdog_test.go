package chrome

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/sdk/stage"
)

// TestMemoryWatchdogStopsRender: a browser past the render bound while a
// render runs there is killed at once; the render fails as unavailable,
// and the next render runs on a new browser.
func TestMemoryWatchdogStopsRender(t *testing.T) {
	t.Parallel()
	n := newTestNet(t)
	defer n.release()
	r := newRenderer(t, `{"tabs":1,"allowRemote":true}`, n.options()...)
	old := currentProc(t, r)
	// Any browser is above 1 MB. Set after Configure, whose first tab
	// would be killed too.
	r.engine().renderMemLimit.Store(1 << 20)
	inFlight := renderAsync(context.Background(), r, stalledDoc(n))
	select {
	case got := <-inFlight:
		if code := stage.CodeOf(got.err); code != stage.CodeUnavailable || !strings.Contains(got.err.Error(), "out of memory") {
			t.Fatalf("in-flight render: %v (code %v), want unavailable for its memory", got.err, code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the render was not stopped")
	}
	groupGone(t, old.pgid)

	r.engine().renderMemLimit.Store(1 << 40)
	render(t, r, doc{body: "<p>on the next browser</p>"})
	if now := currentProc(t, r); now.pgid == old.pgid {
		t.Fatal("still the old browser")
	}
	if s := r.Stats(); s.MemoryRestarts != 1 || s.Crashes != 0 || s.Launches != 2 {
		t.Fatalf("stats %+v, want 1 memory restart, no crash, 2 launches", s)
	}
}

// TestMemoryWatchdogStopsSVGImageBomb: the data: images inside an SVG
// image are loaded by the SVG's own document, out of the resource check's
// sight, and the text scan reads SVG images two deep; a PNG of 20000x20000
// pixels three SVG images deep grows the browser by gigabytes (4 GB, for
// 35 s, unchecked) until the watchdog kills the page's process. The
// render fails as too large, and another tenant's renders on the same
// browser, during and after, print.
func TestMemoryWatchdogStopsSVGImageBomb(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, `{"tabs":2}`)
	p := currentProc(t, r)
	base, err := p.rss()
	if err != nil {
		t.Fatal(err)
	}
	limit := base + 1<<30
	r.engine().renderMemLimit.Store(limit)
	svg := dataURI("image/png", pngHeader(20000, 20000))
	for range maxScanDepth + 1 {
		svg = dataURI("image/svg+xml", []byte(`<svg xmlns='http://www.w3.org/2000/svg' width='100' height='100'><image width='100' height='100' href='`+svg+`'/></svg>`))
	}
	// The other tenant renders one document after another meanwhile.
	stopOther := make(chan struct{})
	other := make(chan error, 1)
	go func() {
		renders := 0
		for {
			select {
			case <-stopOther:
				if renders == 0 {
					other <- errors.New("no render")
					return
				}
				other <- nil
				return
			default:
			}
			if _, err := r.Render(context.Background(), &stage.RenderRequest{HTML: doc{body: "<p>another tenant</p>"}.html(), Page: mustPaper(t, "A4")}); err != nil {
				other <- fmt.Errorf("render %d of the other tenant: %w", renders, err)
				return
			}
			renders++
		}
	}()
	stop := make(chan struct{})
	peak := peakRSS(p, stop)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err = r.Render(ctx, &stage.RenderRequest{HTML: doc{body: `<img src="` + svg + `">`}.html(), Page: mustPaper(t, "A4")})
	took := time.Since(start)
	close(stop)
	if code := stage.CodeOf(err); code != stage.CodeTooLarge || !strings.Contains(stage.SafeMessage(err), "memory") {
		t.Fatalf("render: %v (code %v), want too large for its memory", err, code)
	}
	// One sample late at most: about a gigabyte a second at 150 ms.
	if got := <-peak; got > limit+512<<20 {
		t.Errorf("peak %d MB, bound %d MB", got>>20, limit>>20)
	}
	if took > 10*time.Second {
		t.Errorf("stopped after %v", took)
	}
	time.Sleep(300 * time.Millisecond) // the other tenant renders on
	close(stopOther)
	if err := <-other; err != nil {
		t.Error(err)
	}
	render(t, r, doc{body: "<p>next</p>"})
	// The browser may still be replaced, gracefully, for the memory the
	// other tenant's renders saw it holding (maxBrowserMemoryMB).
	if s := r.Stats(); s.PageMemoryKills != 1 || s.Crashes != 0 {
		t.Errorf("stats %+v, want one page killed and no crash", s)
	}
	t.Logf("idle %d MB, stopped after %v", base>>20, took.Round(time.Millisecond))
}

func mustPaper(t testing.TB, name string) stage.PageSize {
	p, ok := papers.Lookup(name)
	if !ok {
		t.Fatalf("no paper %s", name)
	}
	return p
}
