package chrome

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/sdk/stage"
)

// currentProc returns the browser serving r now.
func currentProc(t *testing.T, r *Renderer) *process {
	t.Helper()
	e := r.engine()
	e.mu.Lock()
	g := e.cur
	e.mu.Unlock()
	if g == nil {
		t.Fatal("no browser running")
	}
	<-g.ready
	if g.err != nil {
		t.Fatal(g.err)
	}
	return g.proc
}

// groupGone waits until no process of the group is left.
func groupGone(t *testing.T, pgid int) {
	t.Helper()
	// Generous: each waits for a state, not for how soon it comes, and a
	// loaded CI machine takes seconds to load a document or free a
	// gigabyte that a quiet one takes a fraction of one for.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if n := groupSize(pgid); n == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%d processes of group %d still run", groupSize(pgid), pgid)
}

func groupSize(pgid int) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err == nil && statPgrp(stat) == pgid && !statExited(stat) {
			n++
		}
	}
	return n
}

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// Generous: each waits for a state, not for how soon it comes, and a
	// loaded CI machine takes seconds to load a document or free a
	// gigabyte that a quiet one takes a fraction of one for.
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stalledDoc never finishes loading until the test net releases /stall.
func stalledDoc(n *testNet) string {
	return doc{body: `<p>waiting</p><img src="` + n.publicURL() + `/stall">`}.html()
}

type result struct {
	res *stage.RenderResponse
	err error
}

func renderAsync(ctx context.Context, r *Renderer, html string) <-chan result {
	ch := make(chan result, 1)
	a4, _ := papers.Lookup("A4")
	go func() {
		res, err := r.Render(ctx, &stage.RenderRequest{HTML: html, Page: a4})
		ch <- result{res, err}
	}()
	return ch
}

func TestBrowserKilledMidRender(t *testing.T) {
	t.Parallel()
	n := newTestNet(t)
	r := newRenderer(t, `{"tabs":2,"allowRemote":true}`, n.options()...)
	old := currentProc(t, r)

	inFlight := renderAsync(context.Background(), r, stalledDoc(n))
	<-n.stalled
	if err := syscall.Kill(-old.pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-inFlight:
		if code := stage.CodeOf(got.err); code != stage.CodeUnavailable && code != stage.CodeInternal {
			t.Fatalf("in-flight render: %v (code %v), want unavailable or internal", got.err, code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the in-flight render did not fail")
	}
	groupGone(t, old.pgid)

	render(t, r, doc{body: "<p>after the crash</p>"})
	if now := currentProc(t, r); now.pgid == old.pgid {
		t.Fatal("still the old browser")
	}
	if s := r.Stats(); s.Crashes != 1 || s.Launches != 2 {
		t.Fatalf("stats %+v, want 1 crash and 2 launches", s)
	}
	if _, err := os.Stat(old.dataDir); !os.IsNotExist(err) {
		t.Fatalf("the dead browser's profile %s is still there", old.dataDir)
	}
}

func TestHungBrowserIsReplaced(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, `{"tabs":1}`)
	old := currentProc(t, r)
	// A stopped browser answers nothing, like a wedged one.
	if err := syscall.Kill(-old.pgid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := r.Health(context.Background()); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("Health of a hung browser = %v, want unavailable", err)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Fatalf("Health took %v", d)
	}
	groupGone(t, old.pgid)
	if err := r.Health(context.Background()); err != nil {
		t.Fatalf("Health after the restart: %v", err)
	}
	render(t, r, doc{body: "<p>after the hang</p>"})
	if s := r.Stats(); s.Crashes != 1 {
		t.Fatalf("stats %+v, want 1 crash", s)
	}
}

// TestSlowBrowserOutlivesHealthDeadline: the host checks health with a
// deadline (2 s) shorter than the browser is given to answer (hangCheck).
// A browser slow to answer on a loaded machine was killed when the
// caller's deadline passed, with every render on it; now the check is
// answered at the deadline and the browser goes only if it does not
// answer within hangCheck.
func TestSlowBrowserOutlivesHealthDeadline(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, `{"tabs":1}`)
	old := currentProc(t, r)
	if err := syscall.Kill(-old.pgid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = syscall.Kill(-old.pgid, syscall.SIGCONT)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := r.Health(ctx); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("Health past its deadline = %v, want unavailable", err)
	}
	// Slow, not hung: it answers well within hangCheck.
	if err := syscall.Kill(-old.pgid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed = true
	time.Sleep(hangCheck + time.Second)
	if err := r.Health(context.Background()); err != nil {
		t.Fatalf("Health once it answers: %v", err)
	}
	if now := currentProc(t, r); now.pgid != old.pgid {
		t.Fatal("the slow browser was killed")
	}
	if s := r.Stats(); s.Crashes != 0 || s.Launches != 1 {
		t.Fatalf("stats %+v, want no crash and 1 launch", s)
	}
}

func TestFullQueueAnswersBusy(t *testing.T) {
	t.Parallel()
	n := newTestNet(t)
	r := newRenderer(t, `{"tabs":1,"queue":1,"allowRemote":true,"remoteTimeout":"60s"}`, n.options()...)

	holding := renderAsync(context.Background(), r, stalledDoc(n))
	<-n.stalled
	waiting := renderAsync(context.Background(), r, doc{body: "<p>queued</p>"}.html())
	waitFor(t, "a render in the queue", func() bool { return r.Stats().Waiting == 1 })

	// The tab stays held and the queue full until n.release below, so a
	// render that waited for a place would wait out this deadline and
	// fail with a timeout: busy proves it was not queued. The bound on
	// the time, half the deadline, only catches a wait of seconds before
	// busy; it is no measure of speed, which a loaded machine varies.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	a4, _ := papers.Lookup("A4")
	_, err := r.Render(ctx, &stage.RenderRequest{HTML: doc{body: "<p>one too many</p>"}.html(), Page: a4})
	if stage.CodeOf(err) != stage.CodeBusy {
		t.Fatalf("a render beyond the full queue: got %v after %v, want busy at once", err, time.Since(start))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("busy after %v: the render waited before answering", d)
	}

	n.release()
	for _, ch := range []<-chan result{holding, waiting} {
		if got := <-ch; got.err != nil {
			t.Fatalf("render after release: %v", got.err)
		}
	}
	if s := r.Stats(); s.Busy != 1 {
		t.Fatalf("stats %+v, want 1 busy", s)
	}
}

func TestDeadlinePassedAnswersTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config string
		ctx    time.Duration // 0: no deadline of its own
	}{
		{"request deadline", `{"tabs":1,"allowRemote":true}`, 400 * time.Millisecond},
		{"renderTimeout", `{"tabs":1,"allowRemote":true,"renderTimeout":"2s"}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newTestNet(t)
			r := newRenderer(t, tt.config, n.options()...)
			ctx := context.Background()
			if tt.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctx)
				defer cancel()
			}
			start := time.Now()
			got := <-renderAsync(ctx, r, stalledDoc(n))
			if stage.CodeOf(got.err) != stage.CodeTimeout {
				t.Fatalf("got %v, want timeout", got.err)
			}
			if msg := stage.SafeMessage(got.err); msg == "internal error" || msg == "" {
				t.Fatalf("no safe message: %q", msg)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("timeout took %v", d)
			}
			// The timed-out tab is closed, not reused; the next render
			// gets a fresh one and works.
			render(t, r, doc{body: "<p>after the timeout</p>"})
			if s := r.Stats(); s.TimedOut != 1 || s.TabsRecycled < 1 || s.Crashes != 0 {
				t.Fatalf("stats %+v, want 1 timeout, a recycled tab and no crash", s)
			}
		})
	}
}

// A document's print-only remote resources are fetched while it prints,
// and printing does not wait for them: the tab must not carry those
// fetches into the next document, which waited for them (remoteTimeout
// each, six at a time, as many as the document names) until its own
// timeout.
func TestPrintTimeFetchesDoNotHoldTheTab(t *testing.T) {
	t.Parallel()
	n := newTestNet(t)
	r := newRenderer(t, `{"tabs":1,"allowRemote":true}`, n.options()...)
	render(t, r, doc{css: `@media print { body { background: url(` + n.publicURL() + `/stall) } }`, body: "<p>first</p>"})
	select {
	case <-n.stalled:
	case <-time.After(5 * time.Second):
		t.Fatal("printing did not ask for the print-only background")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a4, _ := papers.Lookup("A4")
	start := time.Now()
	if _, err := r.Render(ctx, &stage.RenderRequest{HTML: doc{body: "<p>next</p>"}.html(), Page: a4}); err != nil {
		t.Fatalf("the next document, after %v: %v", time.Since(start), err)
	}
}

func TestTabsRecycledAfterQuota(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, `{"tabs":1,"recycleAfter":2}`)
	for i := range 5 {
		render(t, r, doc{body: "<p>render " + strconv.Itoa(i) + "</p>"})
	}
	if s := r.Stats(); s.TabsRecycled != 2 || s.Rendered != 5 {
		t.Fatalf("stats %+v, want 2 recycled tabs after 5 renders", s)
	}
}

func TestMemoryBoundRestartsBrowser(t *testing.T) {
	t.Parallel()
	// Any browser is above 1 MB.
	r := newRenderer(t, `{"tabs":1,"maxBrowserMemoryMB":1,"maxRenderMemoryMB":100000}`)
	old := currentProc(t, r)
	if rss, err := old.rss(); err != nil || rss < 10<<20 {
		t.Fatalf("rss %d, %v: want the browser's memory", rss, err)
	}
	render(t, r, doc{body: "<p>first</p>"})
	waitFor(t, "a memory restart", func() bool { return r.Stats().MemoryRestarts >= 1 })
	groupGone(t, old.pgid)
	render(t, r, doc{body: "<p>on the new browser</p>"})
	if s := r.Stats(); s.Launches < 2 || s.Crashes != 0 {
		t.Fatalf("stats %+v, want a second launch and no crash", s)
	}
}

// TestBrowserMemoryLeavesOutFilePages: the memory bound reads what the
// browser costs. Counting every process's resident pages counted the
// Chromium binary, mapped by each of them, about ten times: an idle
// browser read ~1 GB against ~250 MB of PSS, and a soak of corpus
// documents restarted it every 50 s at the default 1.5 GB bound.
func TestBrowserMemoryLeavesOutFilePages(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, `{"tabs":2}`)
	for i := range 4 {
		render(t, r, doc{body: "<h1>page</h1><p>render " + strconv.Itoa(i) + "</p>"})
	}
	p := currentProc(t, r)
	got, err := p.rss()
	if err != nil {
		t.Fatal(err)
	}
	pss := groupPSS(p.pgid)
	if pss == 0 {
		t.Skip("no smaps_rollup to measure PSS with")
	}
	t.Logf("bound reads %d MB, PSS %d MB, %d processes", got>>20, pss>>20, groupSize(p.pgid))
	// Anonymous memory that a process shares with the one it forked from
	// counts for each of them, so the figure may pass PSS, but not by
	// the multiple that the binary's pages made.
	if got < 10<<20 || got > 2*pss {
		t.Fatalf("the bound reads %d MB for a browser of %d MB PSS, want at most twice that", got>>20, pss>>20)
	}
}

func TestStatusKB(t *testing.T) {
	status := []byte("Name:\tchromium\nVmRSS:\t  990000 kB\nRssAnon:\t   40960 kB\nRssFile:\t  171000 kB\nRssShmem:\t    5120 kB\n")
	for _, c := range []struct {
		key  string
		want int64
	}{
		{"RssAnon:", 40960}, {"RssShmem:", 5120}, {"RssFile:", 171000}, {"VmSwap:", 0}, {"Name:", 0},
	} {
		if got := statusKB(status, c.key); got != c.want {
			t.Errorf("%s: %d, want %d", c.key, got, c.want)
		}
	}
}

// TestMemoryCheckedBeforeRender: a browser already past its memory bound
// takes no new render: the render runs on a browser started for it, and
// the old one goes.
func TestMemoryCheckedBeforeRender(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, `{"tabs":1,"maxBrowserMemoryMB":1,"maxRenderMemoryMB":100000}`) // any browser is above 1 MB
	old := currentProc(t, r)
	render(t, r, doc{body: "<p>x</p>"})
	// Only a render starts a browser, so two launches when the first
	// render returns mean it ran on the second.
	if s := r.Stats(); s.Launches < 2 || s.MemoryRestarts < 1 {
		t.Fatalf("stats %+v: want the render on a second browser, the first retired for its memory", s)
	}
	groupGone(t, old.pgid)
}

// TestMemoryCheckSparesLastAttempt: with every check due and a bound no
// browser meets, the first two attempts each retire their browser, and the
// third renders on its own rather than retiring and killing the browser it
// is about to use.
func TestMemoryCheckSparesLastAttempt(t *testing.T) {
	t.Parallel()
	everyCheck := func(o *options) { o.memCheckEvery = time.Nanosecond }
	r := newRenderer(t, `{"tabs":1,"maxBrowserMemoryMB":1,"maxRenderMemoryMB":100000}`, everyCheck)
	render(t, r, doc{body: "<p>x</p>"})
	if s := r.Stats(); s.Launches != 3 {
		t.Fatalf("stats %+v: want the render on the third browser", s)
	}
}

// TestMemoryRetireCountsOnce: a browser retired for its memory while a
// render runs there lives on until that render ends; measured again
// meanwhile (as the check after that render does), it is neither counted
// nor retired a second time.
func TestMemoryRetireCountsOnce(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, `{"tabs":1,"maxBrowserMemoryMB":1,"maxRenderMemoryMB":100000}`)
	e := r.engine()
	e.mu.Lock()
	g := e.cur
	e.mu.Unlock()
	<-g.ready
	e.mu.Lock()
	g.active++ // a render holds a tab
	e.mu.Unlock()
	if !e.retireIfBig(g) {
		t.Fatal("a browser over 1 MB was not retired")
	}
	if e.retireIfBig(g) {
		t.Error("retired twice")
	}
	if s := r.Stats(); s.MemoryRestarts != 1 {
		t.Errorf("%d memory restarts counted, want 1", s.MemoryRestarts)
	}
	pgid := g.proc.pgid
	e.done(g) // the render ends: the browser goes
	groupGone(t, pgid)
}

func TestCloseLeavesNothing(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, `{"tabs":2}`)
	p := currentProc(t, r)
	if err := r.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	groupGone(t, p.pgid)
	if _, err := os.Stat(p.dataDir); !os.IsNotExist(err) {
		t.Fatalf("profile %s left behind", p.dataDir)
	}
	a4, _ := papers.Lookup("A4")
	if _, err := r.Render(context.Background(), &stage.RenderRequest{HTML: "<p>x</p>", Page: a4}); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("Render after Close: %v, want unavailable", err)
	}
	if err := r.Health(context.Background()); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("Health after Close: %v, want unavailable", err)
	}
}

func TestConfigureErrors(t *testing.T) {
	tests := []struct {
		name, config string
		code         stage.Code
		message      string // what serve's error says of it
	}{
		{"unknown key", `{"tab":1}`, stage.CodeInvalid, ""},
		{"missing binary", `{"chromePath":"/nonexistent/chromium"}`, stage.CodeUnavailable,
			"render-chrome: chromePath: stat /nonexistent/chromium: no such file or directory"},
		{"binary that is no browser", `{"chromePath":"/bin/false"}`, stage.CodeUnavailable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(testLog(t))
			defer r.Close()
			_, err := r.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte(tt.config)})
			if stage.CodeOf(err) != tt.code {
				t.Fatalf("got %v, want %v", err, tt.code)
			}
			if tt.message != "" && stage.SafeMessage(err) != tt.message {
				t.Fatalf("message %q, want %q", stage.SafeMessage(err), tt.message)
			}
		})
	}
	if err := New(testLog(t)).Close(); err != nil {
		t.Fatalf("Close before Configure: %v", err)
	}
}

func TestMetrics(t *testing.T) {
	r := sharedRenderer(t)
	render(t, r, doc{body: "<p>x</p>"})
	var b strings.Builder
	if err := r.WriteMetrics(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# TYPE mdpress_chrome_renders_total counter", "mdpress_chrome_tabs_busy 0"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("metrics lack %q:\n%s", want, b.String())
		}
	}
}

// TestRenderRightAfterBrowserDied: a render that arrives between a
// browser's death and chromedp reaping it finds the browser still current.
// Whether it opens a tab there (the pool empty) or takes an idle one,
// nothing of its document reaches the dead browser: it goes to a new one
// instead of failing the client.
func TestRenderRightAfterBrowserDied(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		emptyPool bool
	}{{"opening a tab", true}, {"taking an idle tab", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRenderer(t, `{"tabs":2}`)
			e := r.engine()
			e.mu.Lock()
			g := e.cur
			e.mu.Unlock()
			old := currentProc(t, r)
			if tc.emptyPool {
				warm := <-g.idle
				t.Cleanup(warm.close)
			}
			if err := syscall.Kill(-old.pgid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			render(t, r, doc{body: "<p>right after the crash</p>"})
			if now := currentProc(t, r); now.pgid == old.pgid {
				t.Fatal("still the old browser")
			}
			waitFor(t, "the crash counted", func() bool { return r.Stats().Crashes == 1 })
			if s := r.Stats(); s.Crashes != 1 || s.Launches != 2 {
				t.Fatalf("stats %+v, want 1 crash and 2 launches", s)
			}
		})
	}
}

// TestGoneAfterRetriesIsUnavailable: a render that found its browser gone
// on every attempt tells the client to try again, as one whose browser
// died under it does; it was a 500.
func TestGoneAfterRetriesIsUnavailable(t *testing.T) {
	r := New(testLog(t))
	err := r.failure(context.Background(), nil, fmt.Errorf("%w: open tab: browser process exited", errGone))
	if code := stage.CodeOf(err); code != stage.CodeUnavailable {
		t.Fatalf("%v (code %v), want unavailable", err, code)
	}
}

// TestHungBrowserCountedOnce: a hung browser is found out by every check
// that waits on it at once, the health checks and the hang checks of the
// renders that timed out there; it is one crash, however many found it.
func TestHungBrowserCountedOnce(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, `{"tabs":1}`)
	old := currentProc(t, r)
	if err := syscall.Kill(-old.pgid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	const checks = 8
	errs := make(chan error, checks)
	for range checks {
		go func() { errs <- r.Health(context.Background()) }()
	}
	for range checks {
		if err := <-errs; stage.CodeOf(err) != stage.CodeUnavailable {
			t.Fatalf("Health of a hung browser = %v, want unavailable", err)
		}
	}
	groupGone(t, old.pgid)
	if err := r.Health(context.Background()); err != nil {
		t.Fatalf("Health after the restart: %v", err)
	}
	if s := r.Stats(); s.Crashes != 1 {
		t.Fatalf("stats %+v, want 1 crash", s)
	}
}

// TestHealthChecksDoNotPileUp: a health check answered at its caller's
// deadline leaves the browser its hangCheck to answer. Each check left a
// question of its own waiting on a slow browser, as many as checks came
// in those seconds; they share one now. Not parallel: other tests' checks
// would be counted.
func TestHealthChecksDoNotPileUp(t *testing.T) {
	r := newRenderer(t, `{"tabs":1}`)
	old := currentProc(t, r)
	before := waitingOnVersion() // what earlier tests left, if anything
	if err := syscall.Kill(-old.pgid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-old.pgid, syscall.SIGCONT) }()
	for range 10 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		err := r.Health(ctx)
		cancel()
		if stage.CodeOf(err) != stage.CodeUnavailable {
			t.Fatalf("Health past its deadline = %v, want unavailable", err)
		}
	}
	if n := waitingOnVersion() - before; n > 1 {
		t.Fatalf("%d questions wait on the browser, want 1", n)
	}
}

// waitingOnVersion counts the goroutines of this test binary asking a
// browser for its version.
func waitingOnVersion() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "chrome.(*process).version(")
}
