package chrome

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

// The benchmarks compare the Renderer with bare chromedp doing the least
// that prints a document: setDocumentContent and printToPDF on a warm tab,
// with the same paper settings and none of the gate, load wait or stream.
// Both run interleaved in one benchmark, so machine noise hits both alike.
//
//	go test ./plugins/render-chrome/chrome/ -run '^$' -bench . -benchtime 40x

var benchDoc = doc{numbering: "bottom-center", body: "<h1>Report</h1><p>One page of text for the benchmark.</p>"}.html()

// bareBrowser is chromedp with nothing of ours.
type bareBrowser struct {
	ctx    context.Context
	cancel func()
	tabs   chan *bareTab
}

type bareTab struct {
	target *chromedp.Target
	frame  cdp.FrameID
}

func newBareBrowser(b testing.TB, tabs int) *bareBrowser {
	b.Helper()
	path, err := findChrome("")
	if err != nil {
		b.Skipf("no Chromium: %v", err)
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), bareOptions(path)...)
	bctx, bcancel := chromedp.NewContext(actx, quiet())
	if err := chromedp.Do(bctx); err != nil {
		b.Fatal(err)
	}
	bb := &bareBrowser{ctx: bctx, cancel: func() { bcancel(); acancel() }, tabs: make(chan *bareTab, tabs)}
	b.Cleanup(bb.cancel)
	for range tabs {
		tctx, _ := chromedp.NewContext(bctx) // closed with the browser
		if err := chromedp.Do(tctx); err != nil {
			b.Fatal(err)
		}
		target := chromedp.FromContext(tctx).Target
		tree, err := cdp.Call(tctx, target, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			b.Fatal(err)
		}
		bb.tabs <- &bareTab{target: target, frame: tree.FrameTree.Frame.ID}
	}
	return bb
}

// bareOptions are chromedp's defaults. The resolver rule only keeps the
// browser's background requests on this machine; it costs a print nothing.
func bareOptions(path string) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.DisableGPU,
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"))
}

// quiet keeps chromedp's complaints out of the benchmark lines.
func quiet() chromedp.ContextOption {
	nop := func(string, ...any) {}
	return func(c *chromedp.Context) {
		chromedp.WithLogf(nop)(c)
		chromedp.WithErrorf(nop)(c)
		chromedp.WithBrowserOption(chromedp.WithBrowserLogf(nop), chromedp.WithBrowserErrorf(nop))(c)
	}
}

func (bb *bareBrowser) render(ctx context.Context, html string, size stage.PageSize) ([]byte, error) {
	t := <-bb.tabs
	defer func() { bb.tabs <- t }()
	if _, err := cdp.Call(ctx, t.target, page.SetDocumentContent, page.SetDocumentContentParams{FrameID: t.frame, HTML: html}); err != nil {
		return nil, err
	}
	return chromedp.PrintToPDF(func(p *page.PrintToPDFParams) {
		printParams(size, defaultMaxPages)(p)
		p.TransferMode = ""
	})(ctx, t.target)
}

// BenchmarkWarmOnePage is one client rendering one page at a time.
func BenchmarkWarmOnePage(b *testing.B) {
	r := newRenderer(b, `{"tabs":1}`)
	bare := newBareBrowser(b, 1)
	a4, _ := papers.Lookup("A4")
	ctx := context.Background()
	req := &stage.RenderRequest{HTML: benchDoc, Page: a4}
	for range 5 { // warm both
		_, _ = r.Render(ctx, req)
		_, _ = bare.render(ctx, benchDoc, a4)
	}
	var ours, theirs time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := r.Render(ctx, req); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := bare.render(ctx, benchDoc, a4); err != nil {
			b.Fatal(err)
		}
		ours += mid.Sub(start)
		theirs += time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(ours.Seconds()*1000/n, "renderer-ms/doc")
	b.ReportMetric(theirs.Seconds()*1000/n, "bare-ms/doc")
	b.ReportMetric(ours.Seconds()/theirs.Seconds(), "ratio")
}

// BenchmarkThroughput4Clients is four clients sharing two tabs; each
// iteration is a batch of 20 documents through each contender.
func BenchmarkThroughput4Clients(b *testing.B) {
	const clients, tabs, batch = 4, 2, 20
	r := newRenderer(b, `{"tabs":`+strconv.Itoa(tabs)+`}`)
	bare := newBareBrowser(b, tabs)
	a4, _ := papers.Lookup("A4")
	req := &stage.RenderRequest{HTML: benchDoc, Page: a4}
	ctx := context.Background()
	run := func(render func() error) time.Duration { return plugintest.Batch(b, clients, batch, render) }
	ourRender := func() error { _, err := r.Render(ctx, req); return err }
	bareRender := func() error { _, err := bare.render(ctx, benchDoc, a4); return err }
	run(ourRender)
	run(bareRender)
	var ours, theirs time.Duration
	for b.Loop() {
		ours += run(ourRender)
		theirs += run(bareRender)
	}
	docs := float64(b.N * batch)
	b.ReportMetric(docs/ours.Seconds(), "renderer-docs/s")
	b.ReportMetric(docs/theirs.Seconds(), "bare-docs/s")
	b.ReportMetric(theirs.Seconds()/ours.Seconds(), "ratio")
}

// BenchmarkNaiveProcessPerDocument starts a browser for every document,
// the design the tab pool exists to avoid.
func BenchmarkNaiveProcessPerDocument(b *testing.B) {
	path, err := findChrome("")
	if err != nil {
		b.Skipf("no Chromium: %v", err)
	}
	a4, _ := papers.Lookup("A4")
	for b.Loop() {
		actx, acancel := chromedp.NewExecAllocator(context.Background(), bareOptions(path)...)
		bctx, bcancel := chromedp.NewContext(actx, quiet())
		_, err := chromedp.Run(bctx, func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
			tree, err := cdp.Call(ctx, t, page.GetFrameTree, cdp.Empty{})
			if err != nil {
				return nil, err
			}
			if _, err := cdp.Call(ctx, t, page.SetDocumentContent, page.SetDocumentContentParams{FrameID: tree.FrameTree.Frame.ID, HTML: benchDoc}); err != nil {
				return nil, err
			}
			return chromedp.PrintToPDF(printParams(a4, defaultMaxPages))(ctx, t)
		})
		bcancel()
		acancel()
		if err != nil {
			b.Fatal(err)
		}
	}
}

// TestSoakMemory renders 1,000 documents and reports the browser's memory
// before and after. It takes about a minute, so it runs only when asked:
//
//	MDPRESS_CHROME_SOAK=1 go test ./plugins/render-chrome/chrome/ -run Soak -v
func TestSoakMemory(t *testing.T) {
	if os.Getenv("MDPRESS_CHROME_SOAK") == "" {
		t.Skip("set MDPRESS_CHROME_SOAK=1 to render 1,000 documents and compare the browser's memory")
	}
	r := newRenderer(t, `{"tabs":2}`)
	page := func(i int) doc {
		return doc{numbering: "bottom-center", body: "<h1>Document " + strconv.Itoa(i) + "</h1><p>Body.</p>"}
	}
	// Warm up on the soak's own document shape, so that caches filling
	// (fonts, layout of the margin boxes) do not count as growth.
	for i := range 100 {
		render(t, r, page(i))
	}
	const total, step = 1000, 250
	var pss, rss []int64
	sample := func() {
		p := currentProc(t, r)
		v, err := p.rss()
		if err != nil {
			t.Fatal(err)
		}
		rss = append(rss, v)
		pss = append(pss, groupPSS(p.pgid))
	}
	sample()
	start := time.Now()
	for done := 0; done < total; done += step {
		var wg sync.WaitGroup
		jobs := make(chan int, step)
		for i := range step {
			jobs <- done + i
		}
		close(jobs)
		for range 4 {
			wg.Go(func() {
				for i := range jobs {
					render(t, r, page(i))
				}
			})
		}
		wg.Wait()
		sample()
	}
	took := time.Since(start)
	mib := func(v []int64) []int64 {
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = x >> 20
		}
		return out
	}
	s := r.Stats()
	t.Logf("%d renders in %v (%.1f/s); every %d renders, browser PSS %v MiB (%+.1f%%), the memory bound's figure %v MiB (%+.1f%%); tabs recycled %d, launches %d",
		total, took.Round(time.Millisecond), total/took.Seconds(), step,
		mib(pss), 100*float64(pss[len(pss)-1]-pss[0])/float64(pss[0]),
		mib(rss), 100*float64(rss[len(rss)-1]-rss[0])/float64(rss[0]), s.TabsRecycled, s.Launches)
	if s.Rendered < total {
		t.Fatalf("rendered %d", s.Rendered)
	}
}

// groupPSS sums the proportional set size of a process group: shared pages
// split between the processes that share them, so unlike summed RSS it is
// what the group costs.
func groupPSS(pgid int) int64 {
	entries, _ := os.ReadDir("/proc")
	var total int64
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil || statPgrp(stat) != pgid {
			continue
		}
		rollup, err := os.ReadFile(filepath.Join("/proc", e.Name(), "smaps_rollup"))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(rollup)) {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "Pss:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				total += kb << 10
			}
		}
	}
	return total
}
