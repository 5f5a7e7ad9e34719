package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/plugins/parse-goldmark/markdown"
	fpdfrender "github.com/mdpress/mdpress/plugins/render-fpdf/render"
	"github.com/mdpress/mdpress/plugins/style-themes/themes"
	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// quietCDP keeps chromedp's protocol chatter out of the figures' output.
var quietCDP = []chromedp.ContextOption{chromedp.WithLogf(nop), chromedp.WithErrorf(nop)}

func nop(string, ...any) {}

// styled runs the parse and style code in process, as the baselines need
// the very document the pipeline renders.
func styled(b *testing.B, md string) (*stage.StyleResponse, stage.Document) {
	b.Helper()
	ctx := context.Background()
	p := markdown.New(quiet)
	if _, err := p.Configure(ctx, &stage.ConfigureRequest{Config: []byte("{}")}); err != nil {
		b.Fatal(err)
	}
	parsed, err := p.Parse(ctx, &stage.ParseRequest{Markdown: md})
	if err != nil {
		b.Fatal(err)
	}
	s := themes.New(quiet)
	if _, err := s.Configure(ctx, &stage.ConfigureRequest{Config: []byte("{}")}); err != nil {
		b.Fatal(err)
	}
	a4, _ := papers.Lookup("A4")
	st, err := s.Style(ctx, &stage.StyleRequest{Document: parsed.Document, Theme: "modern", Page: a4, Numbering: stage.NumberingCenter})
	if err != nil {
		b.Fatal(err)
	}
	return st, parsed.Document
}

// bareChrome is chromedp and nothing of ours: setDocumentContent and
// printToPDF on warm tabs.
type bareChrome struct {
	tabs chan bareTab
	path string
}

type bareTab struct {
	target *chromedp.Target
	frame  cdp.FrameID
}

func chromePath(b *testing.B) string {
	for _, p := range []string{"/usr/lib/chromium/chromium", "/usr/bin/chromium"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	b.Skip("chromium not installed (apt-get install chromium)")
	return ""
}

func allocOptions(path string) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.DisableGPU,
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"))
}

func newBareChrome(b *testing.B, tabs int) *bareChrome {
	b.Helper()
	path := chromePath(b)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), allocOptions(path)...)
	bctx, bcancel := chromedp.NewContext(actx, quietCDP...)
	b.Cleanup(func() { bcancel(); acancel() })
	if err := chromedp.Do(bctx); err != nil {
		b.Fatal(err)
	}
	bc := &bareChrome{tabs: make(chan bareTab, tabs), path: path}
	for range tabs {
		tctx, _ := chromedp.NewContext(bctx)
		if err := chromedp.Do(tctx); err != nil {
			b.Fatal(err)
		}
		t := chromedp.FromContext(tctx).Target
		tree, err := cdp.Call(tctx, t, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			b.Fatal(err)
		}
		bc.tabs <- bareTab{target: t, frame: tree.FrameTree.Frame.ID}
	}
	return bc
}

func printA4(p *page.PrintToPDFParams) {
	a4, _ := papers.Lookup("A4")
	w, h := a4.WidthPt/72, a4.HeightPt/72
	zero := 0.0
	p.PaperWidth, p.PaperHeight = w, h
	p.MarginTop, p.MarginBottom, p.MarginLeft, p.MarginRight = &zero, &zero, &zero, &zero
	p.PrintBackground = new(true)
}

func (bc *bareChrome) render(ctx context.Context, html string) error {
	t := <-bc.tabs
	defer func() { bc.tabs <- t }()
	if _, err := cdp.Call(ctx, t.target, page.SetDocumentContent, page.SetDocumentContentParams{FrameID: t.frame, HTML: html}); err != nil {
		return err
	}
	_, err := chromedp.PrintToPDF(printA4)(ctx, t.target)
	return err
}

// naive starts a browser for the document, the design a tab pool avoids.
func (bc *bareChrome) naive(html string) error {
	actx, acancel := chromedp.NewExecAllocator(context.Background(), allocOptions(bc.path)...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx, quietCDP...)
	defer bcancel()
	_, err := chromedp.Run(bctx, func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		tree, err := cdp.Call(ctx, t, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			return nil, err
		}
		if _, err := cdp.Call(ctx, t, page.SetDocumentContent, page.SetDocumentContentParams{FrameID: tree.FrameTree.Frame.ID, HTML: html}); err != nil {
			return nil, err
		}
		return chromedp.PrintToPDF(printA4)(ctx, t)
	})
	return err
}

// BenchmarkChromeWarmOnePage: one client, one page, end to end through
// six plugin processes vs bare chromedp on a warm tab. Target: ratio <= 1.25.
func BenchmarkChromeWarmOnePage(b *testing.B) {
	st, _ := styled(b, onePage)
	bare := newBareChrome(b, 1)
	h := startHost(b, "chrome")
	ctx := context.Background()
	for range 5 {
		_, _ = h.convert(ctx, onePage)
		_ = bare.render(ctx, st.HTML)
	}
	var ours, theirs time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := h.convert(ctx, onePage); err != nil {
			b.Fatal(err)
		}
		answered := time.Now()
		time.Sleep(settle) // the host's commit after the answer
		mid := time.Now()
		if err := bare.render(ctx, st.HTML); err != nil {
			b.Fatal(err)
		}
		ours += answered.Sub(start)
		theirs += time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(ours.Seconds()*1000/n, "e2e-ms/doc")
	b.ReportMetric(theirs.Seconds()*1000/n, "bare-ms/doc")
	b.ReportMetric(ours.Seconds()/theirs.Seconds(), "e2e/bare")
}

// BenchmarkChromeThroughput4Clients: four clients, end to end vs bare
// chromedp with the same number of tabs (render-chrome's default, one per
// core), and vs a browser per document. Targets: e2e/bare >= 0.8,
// e2e/naive >= 10.
func BenchmarkChromeThroughput4Clients(b *testing.B) {
	const clients, batch = 4, 24
	st, _ := styled(b, onePage)
	tabs := max(2, runtimeCPUs())
	bare := newBareChrome(b, tabs)
	h := startHost(b, "chrome")
	ctx := context.Background()
	ourJob := func() error { _, err := h.convert(ctx, onePage); return err }
	bareJob := func() error { return bare.render(ctx, st.HTML) }
	naiveJob := func() error { return bare.naive(st.HTML) }
	plugintest.Batch(b, clients, batch, ourJob)
	plugintest.Batch(b, clients, batch, bareJob)
	var ours, theirs, naive time.Duration
	naiveDocs := 0
	for b.Loop() {
		ours += plugintest.Batch(b, clients, batch, ourJob)
		theirs += plugintest.Batch(b, clients, batch, bareJob)
		naive += plugintest.Batch(b, clients, clients, naiveJob)
		naiveDocs += clients
	}
	docs := float64(b.N * batch)
	b.ReportMetric(docs/ours.Seconds(), "e2e-docs/s")
	b.ReportMetric(docs/theirs.Seconds(), "bare-docs/s")
	b.ReportMetric(float64(naiveDocs)/naive.Seconds(), "naive-docs/s")
	b.ReportMetric(theirs.Seconds()/ours.Seconds(), "e2e/bare")
	b.ReportMetric((docs/ours.Seconds())/(float64(naiveDocs)/naive.Seconds()), "e2e/naive")
}

// settle is the pause after an end-to-end request before the in-process
// baseline is timed: the host commits the charge after answering, and the
// baseline must not share the CPU with that.
const settle = 3 * time.Millisecond

// tenPagesInProcess returns the 10-page document, and render-fpdf's layout
// configured in this process with the request that renders its tree.
func tenPagesInProcess(b *testing.B) (string, *fpdfrender.Renderer, *stage.RenderRequest) {
	return inProcess(b, tenPages())
}

// inProcess returns render-fpdf's layout configured in this process with
// the request that renders md's tree.
func inProcess(b *testing.B, md string) (string, *fpdfrender.Renderer, *stage.RenderRequest) {
	st, doc := styled(b, md)
	r := fpdfrender.New(quiet)
	if _, err := r.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte("{}")}); err != nil {
		b.Fatal(err)
	}
	a4, _ := papers.Lookup("A4")
	return md, r, &stage.RenderRequest{HTML: st.HTML, Document: doc, Tokens: st.Tokens, Page: a4, Numbering: stage.NumberingCenter}
}

// BenchmarkFpdfTenPages: one client, ten pages, end to end through six
// plugin processes vs render-fpdf's layout called in process on the same
// tree. Target: in-process/e2e >= 0.7 (e2e at least 0.7x as fast). Also
// reported: the same with goldmark's parse added to the in-process side
// (the whole conversion in one process), what each process spent per
// document, and the host's mean time per stage call.
func BenchmarkFpdfTenPages(b *testing.B) {
	md, r, req := tenPagesInProcess(b)
	ctx := context.Background()
	h := startHost(b, "fpdf")
	// The parse of the same document in process, for the second ratio: the
	// whole conversion in one process against the same through six.
	p := markdown.New(quiet)
	if _, err := p.Configure(ctx, &stage.ConfigureRequest{Config: []byte("{}")}); err != nil {
		b.Fatal(err)
	}
	preq := &stage.ParseRequest{Markdown: md, SkipHTML: true}
	pages := 0
	for range 5 {
		_, _ = h.convert(ctx, md)
		_, _ = p.Parse(ctx, preq)
		resp, err := r.Render(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		pages = resp.Pages
	}
	var ours, theirs, parse, clientCPU, layoutCPU time.Duration
	cpuBefore := h.processCPU()
	for b.Loop() {
		c0, start := selfCPU(), time.Now()
		if _, err := h.convert(ctx, md); err != nil {
			b.Fatal(err)
		}
		answered, c1 := time.Now(), selfCPU()
		time.Sleep(settle) // the host's commit after the answer
		c2, mid := selfCPU(), time.Now()
		if _, err := r.Render(ctx, req); err != nil {
			b.Fatal(err)
		}
		parsed, c3 := time.Now(), selfCPU()
		clientCPU += c1 - c0
		layoutCPU += c3 - c2
		if _, err := p.Parse(ctx, preq); err != nil {
			b.Fatal(err)
		}
		ours += answered.Sub(start)
		theirs += parsed.Sub(mid)
		parse += time.Since(parsed)
	}
	n := float64(b.N)
	// What each process spent per document (10 ms clock ticks, so a figure
	// is good to about 10/N ms): with one client the processes mostly take
	// turns, so end to end is close to the sum of these.
	pipelineCPU := clientCPU
	for name, t := range h.processCPU() {
		pipelineCPU += t - cpuBefore[name]
		short, _, _ := strings.Cut(name, "-") // render-fpdf: render
		if short == "mdpress" {
			short = "host"
		}
		if slices.Contains([]string{"host", "auth", "meter", "parse", "render"}, short) {
			b.ReportMetric((t-cpuBefore[name]).Seconds()*1000/n, short+"-cpu-ms")
		}
	}
	// The bound the cores set: end to end, the client and every process
	// together spend pipelineCPU per document, and no schedule finishes a
	// document in less than that spread over all cores. inproc/cpu-floor
	// is the best ratio that perfect overlap could give on this machine.
	floor := pipelineCPU.Seconds() / float64(runtimeCPUs())
	b.ReportMetric(clientCPU.Seconds()*1000/n, "client-cpu-ms")
	b.ReportMetric(pipelineCPU.Seconds()*1000/n, "pipeline-cpu-ms")
	b.ReportMetric(layoutCPU.Seconds()*1000/n, "inproc-cpu-ms")
	b.ReportMetric(theirs.Seconds()/floor, "inproc/cpu-floor")
	b.ReportMetric(float64(pages), "pages")
	b.ReportMetric(ours.Seconds()*1000/n, "e2e-ms/doc")
	b.ReportMetric(theirs.Seconds()*1000/n, "inproc-ms/doc")
	b.ReportMetric(theirs.Seconds()/ours.Seconds(), "inproc/e2e")
	b.ReportMetric((theirs+parse).Seconds()/ours.Seconds(), "parse+inproc/e2e")
	// Where the end-to-end time goes, as the host saw each stage call
	// (warm-up included): parse and commit are on the request's path
	// besides the render; auth and the reservation run beside the parse.
	means := h.stageMeans(b)
	for _, st := range []string{"parse", "render", "meter"} {
		b.ReportMetric(means[st]*1000, st+"-ms")
	}
}

// BenchmarkFpdfLong: one client, a hundred and three hundred pages (the
// 10-page document 10 and 30 times), end to end vs the layout called in
// process. The parse streams into the render in parts, so on a long
// document the parse hides behind the layout, and the ratio shows what is
// left: the fixed cost per request, spread over more pages.
func BenchmarkFpdfLong(b *testing.B) {
	h := startHost(b, "fpdf")
	ctx := context.Background()
	for _, copies := range []int{10, 30} {
		md, r, req := inProcess(b, strings.Repeat(tenPages(), copies))
		b.Run(fmt.Sprintf("copies=%d", copies), func(b *testing.B) {
			pages := 0
			for range 2 {
				_, _ = h.convert(ctx, md)
				resp, err := r.Render(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				pages = resp.Pages
			}
			againstInProcess(b, "e2e", func() error { _, err := h.convert(ctx, md); return err },
				func() error { _, err := r.Render(ctx, req); return err })
			b.ReportMetric(float64(pages), "pages") // after the loop, which clears reported metrics
		})
	}
}

// BenchmarkPluginHop: the round trip of the cheapest stage call (Health on
// render-fpdf), made at once after the last one and made after the caller
// has computed for 5 ms, about what the pipeline does between one plugin's
// calls. The difference is what waking an idle plugin process and its
// caller costs on this machine, paid on every hop of a conversion. The
// same two round trips of 64 bytes over a bare Unix socket to another
// process are the machine's floor, what no RPC layer can go below.
func BenchmarkPluginHop(b *testing.B) {
	c := plugintest.Launch(b, filepath.Join(binDir, "plugins", "render-fpdf"), stage.NameRender, plugintest.Config{})
	peer := echoPeer(b)
	ctx := context.Background()
	msg := make([]byte, 64)
	grpcCall := func() error { return c.Health(ctx) }
	socketCall := func() error {
		if _, err := peer.Write(msg); err != nil {
			return err
		}
		_, err := io.ReadFull(peer, msg)
		return err
	}
	timed := func(call func() error) time.Duration {
		start := time.Now()
		if err := call(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	// hops returns a call's round trip right after another one, and
	// after the caller has computed for 5 ms.
	hops := func(call func() error) (hot, idle time.Duration) {
		timed(call)
		hot = timed(call)
		for start := time.Now(); time.Since(start) < 5*time.Millisecond; {
		}
		return hot, timed(call)
	}
	for range 20 {
		hops(grpcCall)
		hops(socketCall)
	}
	var hot, idle, sockHot, sockIdle time.Duration
	for b.Loop() {
		h, i := hops(grpcCall)
		hot, idle = hot+h, idle+i
		h, i = hops(socketCall)
		sockHot, sockIdle = sockHot+h, sockIdle+i
	}
	n := float64(b.N)
	b.ReportMetric(hot.Seconds()*1e6/n, "hot-us")
	b.ReportMetric(idle.Seconds()*1e6/n, "after-idle-us")
	b.ReportMetric(idle.Seconds()/hot.Seconds(), "idle/hot")
	b.ReportMetric(sockHot.Seconds()*1e6/n, "socket-hot-us")
	b.ReportMetric(sockIdle.Seconds()*1e6/n, "socket-after-idle-us")
}

// BenchmarkFpdfTenPagesThroughput: four clients, ten pages, end-to-end
// throughput through six plugin processes vs four goroutines calling
// render-fpdf's layout in process on the same tree. One client measures
// the latency the hops add (BenchmarkFpdfTenPages); this measures what the
// pipeline costs a busy machine, where the hops of one request overlap the
// work of others.
func BenchmarkFpdfTenPagesThroughput(b *testing.B) {
	const clients, batch = 4, 16
	md, r, req := tenPagesInProcess(b)
	ctx := context.Background()
	h := startHost(b, "fpdf")
	e2eJob := func() error { _, err := h.convert(ctx, md); return err }
	inJob := func() error { _, err := r.Render(ctx, req); return err }
	plugintest.Batch(b, clients, batch, e2eJob)
	plugintest.Batch(b, clients, batch, inJob)
	var ours, theirs time.Duration
	for b.Loop() {
		ours += plugintest.Batch(b, clients, batch, e2eJob)
		theirs += plugintest.Batch(b, clients, batch, inJob)
	}
	docs := float64(b.N * batch)
	b.ReportMetric(docs/ours.Seconds(), "e2e-docs/s")
	b.ReportMetric(docs/theirs.Seconds(), "inproc-docs/s")
	b.ReportMetric(theirs.Seconds()/ours.Seconds(), "e2e/inproc")
}

// BenchmarkFpdfVsChromeOnePage: four clients, one page, end to end on
// both backends at once. Target: fpdf/chrome >= 10.
func BenchmarkFpdfVsChromeOnePage(b *testing.B) {
	const clients, batch = 4, 24
	chromePath(b)
	fp := startHost(b, "fpdf")
	ch := startHost(b, "chrome")
	ctx := context.Background()
	fpJob := func() error { _, err := fp.convert(ctx, onePage); return err }
	chJob := func() error { _, err := ch.convert(ctx, onePage); return err }
	plugintest.Batch(b, clients, batch, fpJob)
	plugintest.Batch(b, clients, batch, chJob)
	var f, c time.Duration
	for b.Loop() {
		f += plugintest.Batch(b, clients, batch*5, fpJob)
		c += plugintest.Batch(b, clients, batch, chJob)
	}
	fps := float64(b.N*batch*5) / f.Seconds()
	cps := float64(b.N*batch) / c.Seconds()
	b.ReportMetric(fps, "fpdf-docs/s")
	b.ReportMetric(cps, "chrome-docs/s")
	b.ReportMetric(fps/cps, "fpdf/chrome")
}
