// Package chrome is the render stage on Chromium: it prints the styled HTML
// document the style stage made, in one long-lived browser with a pool of
// reused tabs, with every request the document makes refused unless the
// operator allows public remote resources. A watermark is stamped into the
// printed PDF (package watermark), out of the document's reach.
package chrome

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/mdpress/mdpress/plugins/render-chrome/chrome/egress"
	"github.com/mdpress/mdpress/plugins/render-chrome/chrome/watermark"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Version is reported in the plugin's Info.
const Version = "0.1.0"

// Creator and Producer name mdpress in every PDF's document information,
// as render-fpdf's do, where Chromium wrote its user agent and Skia.
const (
	Creator  = "mdpress render-chrome"
	Producer = "mdpress"
)

// maxPagePt bounds a page side: the largest a PDF page may be (200 in).
const maxPagePt = 14400

// Renderer prints styled HTML to PDF with Chromium.
type Renderer struct {
	log  *slog.Logger
	opts options

	mu  sync.Mutex
	eng *engine
	// stats outlive engines so counters never go backwards.
	stats stats
}

// Option changes a Renderer.
type Option func(*options)

type options struct {
	lookup      egress.LookupFunc
	dial        egress.DialFunc
	bareNetwork bool // tests only; see launchOptions
	// stamp is watermark.Stamp; tests watch it.
	stamp func(pdf []byte, m watermark.Mark) ([]byte, error)
	// memCheckEvery is memCheckEvery; tests make every check due.
	memCheckEvery time.Duration
}

// WithLookup replaces the resolver remote resources are looked up with.
// Tests point names at loopback servers with it; the address policy still
// applies to what it returns.
func WithLookup(f egress.LookupFunc) Option { return func(o *options) { o.lookup = f } }

// WithDial replaces how a checked address of a remote resource is dialled.
func WithDial(f egress.DialFunc) Option { return func(o *options) { o.dial = f } }

// New returns a Renderer. It starts nothing until Configure.
func New(log *slog.Logger, opts ...Option) *Renderer {
	r := &Renderer{log: log, opts: options{stamp: watermark.Stamp, memCheckEvery: memCheckEvery}}
	for _, o := range opts {
		o(&r.opts)
	}
	return r
}

// Configure reads the config, starts the browser and opens a first tab, so
// that the host's health check and the first render find it warm.
func (r *Renderer) Configure(ctx context.Context, req *stage.ConfigureRequest) (*stage.ConfigureResponse, error) {
	cfg, err := ParseConfig(req.Config)
	if err != nil {
		return nil, err
	}
	path, err := findChrome(cfg.ChromePath)
	if err != nil && cfg.ChromePath != "" {
		// serve's one line: "set chromePath" sent an operator who had set
		// it looking for another cause than the path's.
		return nil, stage.Wrap(stage.CodeUnavailable, err, "render-chrome: chromePath: "+err.Error())
	}
	if err != nil {
		return nil, stage.Wrap(stage.CodeUnavailable, err, "render-chrome: no Chromium found (set chromePath)")
	}
	sweepProfiles(r.log)
	hole, err := newBlackhole()
	if err != nil {
		return nil, stage.Wrap(stage.CodeInternal, err, "render-chrome: start")
	}
	root, stop := context.WithCancel(context.Background())
	e := &engine{
		cfg:      cfg,
		launchOp: launchOptions{execPath: path, proxyAddr: hole.addr(), bareNetwork: r.opts.bareNetwork, javascript: cfg.JavaScript, noSandbox: cfg.NoSandbox, log: r.log},
		gate: &gate{
			allowRemote: cfg.AllowRemote,
			fetcher:     egress.NewFetcher(r.opts.lookup, r.opts.dial, cfg.RemoteMaxBytes, time.Duration(cfg.RemoteTimeout)),
			log:         r.log,
			stats:       &r.stats,
		},
		log:      r.log,
		stats:    &r.stats,
		hole:     hole,
		root:     root,
		stop:     stop,
		slots:    make(chan struct{}, cfg.Tabs),
		memEvery: r.opts.memCheckEvery,
		gens:     make(map[*generation]struct{}),
	}
	e.renderMemLimit.Store(int64(cfg.MaxRenderMemoryMB) << 20)
	go e.watchMemory()
	r.mu.Lock()
	old := r.eng
	r.eng = e
	r.mu.Unlock()
	if old != nil {
		old.close()
	}
	if err := r.warm(ctx, e); err != nil {
		return nil, stage.Wrap(stage.CodeUnavailable, err, "render-chrome: Chromium did not start")
	}
	r.log.Info("render-chrome configured", "chrome", path, "tabs", cfg.Tabs, "queue", cfg.Queue,
		"javascript", cfg.JavaScript, "allowRemote", cfg.AllowRemote, "sandbox", e.launchOp.sandboxed(os.Geteuid()))
	return &stage.ConfigureResponse{Info: stage.Info{
		Name:         "render-chrome",
		Version:      Version,
		Capabilities: []string{stage.CapCSS, stage.CapReadsHTML},
	}}, nil
}

// warm starts the browser and puts one tab in the pool.
func (r *Renderer) warm(ctx context.Context, e *engine) error {
	g, err := e.current(ctx)
	if err != nil {
		return err
	}
	t, err := e.take(ctx, g)
	if err != nil {
		return err
	}
	e.give(g, t, true)
	return nil
}

func (r *Renderer) engine() *engine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.eng
}

// Health checks that the browser answers, starting one if the last died.
func (r *Renderer) Health(ctx context.Context) error {
	e := r.engine()
	if e == nil {
		return stage.Errorf(stage.CodeUnavailable, "render-chrome: not configured")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	g, err := e.current(ctx)
	if err != nil {
		return stage.Wrap(stage.CodeUnavailable, err, "render-chrome: browser unavailable")
	}
	// The browser is given hangCheck to answer whatever the caller's
	// deadline: the host's checks allow 2 s, and a browser busy printing
	// on a loaded machine that answered in 2.5 s was killed with every
	// render on it. Killed, the next call starts a new one.
	a := e.checkHung(g)
	select {
	case <-a.done:
		if a.err != nil {
			return stage.Wrap(stage.CodeUnavailable, a.err, "render-chrome: browser does not answer")
		}
		return nil
	case <-ctx.Done():
		return stage.Wrap(stage.CodeUnavailable, ctx.Err(), "render-chrome: the browser has not answered yet")
	}
}

// Close kills the browser. It is safe to call twice and before Configure.
func (r *Renderer) Close() error {
	r.mu.Lock()
	e := r.eng
	r.eng = nil
	r.mu.Unlock()
	if e != nil {
		e.close()
	}
	return nil
}

// Render prints req.HTML on paper of req.Page, and stamps req.Watermark,
// if any, on every page.
func (r *Renderer) Render(ctx context.Context, req *stage.RenderRequest) (*stage.RenderResponse, error) {
	e := r.engine()
	if e == nil {
		return nil, stage.Errorf(stage.CodeUnavailable, "render-chrome: not configured")
	}
	if err := validate(req); err != nil {
		return nil, err
	}
	if err := scanDataImages(req.HTML); err != nil {
		r.log.InfoContext(ctx, "document refused before loading", "reason", stage.SafeMessage(err))
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(e.cfg.RenderTimeout))
	defer cancel()

	release, err := e.admit(ctx)
	if err != nil {
		return nil, r.failure(ctx, nil, err)
	}
	defer release()
	e.stats.inFlight.Add(1)
	defer e.stats.inFlight.Add(-1)

	retried := false
	for attempt := 0; ; attempt++ {
		g, err := e.current(ctx)
		if err != nil {
			return nil, r.failure(ctx, nil, err)
		}
		// The last attempt is not checked: a browser it retired would be
		// killed before the render could take a tab there, and the render
		// would fail for a bound the browser started for it may pass.
		if attempt < 2 && e.checkMemoryBefore(g) {
			continue // retired: the next browser takes the render
		}
		t, err := e.take(ctx, g)
		if errors.Is(err, errGone) && attempt < 2 {
			continue // the browser went away before the render began
		}
		if err != nil {
			return nil, r.failure(ctx, g, err)
		}
		// The watchdog stops the render it blames for the browser's memory.
		pctx, stop := context.WithCancel(ctx)
		job := e.beginPrint(ctx, g, t, stop)
		pdf, err := t.render(pctx, req.HTML, req.Page, e.cfg.MaxPages, e.cfg.MaxPDFBytes)
		e.endPrint(g, job)
		stop()
		var refused *stage.Error // by the document's images, before printing
		if errors.As(err, &refused) && !errors.Is(err, errPDFTooLarge) {
			r.log.InfoContext(ctx, "document refused before printing", "reason", refused.Message)
		} else if refused != nil {
			r.log.InfoContext(ctx, "document refused after printing", "reason", refused.Message)
			refused = nil
		}
		// A tab that refused a document printed nothing: it may serve again.
		// One still fetching remote resources for it does not: printing
		// asks for what only print uses (a print-only background) and does
		// not wait for it, and the next document, maybe another account's,
		// would wait for those fetches until its own timeout. Nor does the
		// tab of a render the watchdog blamed, even one that printed: the
		// watchdog closes it after the blame, maybe after the render ended,
		// and the next document would fail there.
		e.give(g, t, (err == nil || refused != nil) && t.pending.Load() == 0 && !job.culprit.Load())
		e.checkMemoryAfter(g) // a failed render may have grown it too
		if err != nil && !retried && !errors.As(err, new(*stage.Error)) && g.overMemory.Load() && !job.culprit.Load() && ctx.Err() == nil {
			// Killed for another document's memory: this one did nothing
			// wrong. Once only, so that a misblamed bomb cannot take a
			// render with it browser after browser.
			retried = true
			e.stats.retried.Add(1)
			r.log.InfoContext(ctx, "render retried on a new browser: its browser was killed for another render's memory", "err", err)
			continue
		}
		if err != nil && job.culprit.Load() && !errors.As(err, new(*stage.Error)) && ctx.Err() == nil {
			// Told as a limit, like too many pages: "try again" sent
			// clients back with the same document, to be stopped again.
			r.stats.failed.Add(1)
			limit := fmt.Sprintf("%d MB", e.renderMemLimit.Load()>>20)
			return nil, &stage.Error{Code: stage.CodeTooLarge,
				Message: "the document needs more memory to print than a render may use (" + limit + "); use fewer or smaller images",
				Details: map[string]string{"limit": limit},
				Err:     fmt.Errorf("render over the memory bound: %w", err)}
		}
		if err != nil {
			if ctx.Err() != nil && g.proc.alive() {
				// The time may have gone to a wedged browser; the client
				// is not kept waiting for the answer.
				e.checkHung(g)
			}
			return nil, r.failure(ctx, g, err)
		}
		e.stats.rendered.Add(1)
		// By the page tree: the bytes "/Type /Page" also occur in the
		// document's own link URIs, bookmark titles and JPEG comments.
		pages, err := watermark.PageCount(pdf)
		if err != nil {
			return nil, r.failure(ctx, nil, fmt.Errorf("count pages: %w", err))
		}
		if pages > e.cfg.MaxPages {
			err := stage.Errorf(stage.CodeTooLarge, "document needs more than %d pages", e.cfg.MaxPages)
			err.Details = map[string]string{"limit": fmt.Sprintf("%d pages", e.cfg.MaxPages)}
			return nil, err
		}
		// What readers show of the file: its maker, and the bookmarks'
		// titles. A PDF that cannot be described is still the document.
		headings := make([]string, len(req.Document.Outline))
		for i, h := range req.Document.Outline {
			headings[i] = h.Text
		}
		if described, err := watermark.Describe(pdf, watermark.Meta{Creator: Creator, Producer: Producer, Headings: headings}); err != nil {
			r.log.WarnContext(ctx, "pdf metadata left as printed", "err", err)
		} else {
			pdf = described
		}
		if req.Watermark != "" {
			// Drawn into the printed PDF, where the document's CSS cannot
			// hide it; the style stage draws none.
			pdf, err = r.opts.stamp(pdf, watermark.Mark{Text: req.Watermark, Margins: req.Tokens.Margins})
			if err != nil {
				return nil, r.failure(ctx, nil, fmt.Errorf("stamp the watermark: %w", err))
			}
		}
		return &stage.RenderResponse{PDF: pdf, Pages: pages}, nil
	}
}

func validate(req *stage.RenderRequest) error {
	if req.HTML == "" {
		return stage.Errorf(stage.CodeInvalid, "nothing to render: the HTML is empty")
	}
	p := req.Page
	if !(p.WidthPt > 0 && p.HeightPt > 0 && p.WidthPt <= maxPagePt && p.HeightPt <= maxPagePt) {
		return stage.Errorf(stage.CodeInvalid, "page size %gx%g pt is outside 0..%d pt", p.WidthPt, p.HeightPt, maxPagePt)
	}
	return nil
}

// failure turns err into a client-safe stage error and counts it. g is the
// browser the render ran on, if it got that far.
func (r *Renderer) failure(ctx context.Context, g *generation, err error) error {
	var se *stage.Error
	if errors.As(err, &se) {
		return err // already safe: busy, invalid
	}
	r.stats.failed.Add(1)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.stats.timedOut.Add(1)
		return stage.Wrap(stage.CodeTimeout, err, "rendering the PDF took longer than allowed")
	case ctx.Err() != nil:
		// The caller gave up: nothing for the log (the cause carries
		// the context's error, which the SDK does not log).
		return stage.Wrap(stage.CodeUnavailable, fmt.Errorf("%w: %w", ctx.Err(), err), "rendering was canceled")
	case errors.Is(err, errClosed):
		return stage.Wrap(stage.CodeUnavailable, err, "the renderer is shutting down")
	case errors.Is(err, errLaunch):
		return stage.Wrap(stage.CodeUnavailable, err, "the browser could not start; try again")
	case g != nil && g.overMemory.Load():
		return stage.Wrap(stage.CodeUnavailable, fmt.Errorf("browser over its render memory bound: %w", err),
			"the browser ran out of memory while rendering; try again")
	case errors.Is(err, errGone), g != nil && !g.proc.alive():
		return stage.Wrap(stage.CodeUnavailable, fmt.Errorf("browser gone: %w", err), "the browser stopped while rendering; try again")
	}
	return stage.Wrap(stage.CodeInternal, err, "rendering the PDF failed") // logged by the SDK
}

// Stats returns the renderer's counters.
func (r *Renderer) Stats() Stats {
	s := r.stats.snapshot()
	if e := r.engine(); e != nil {
		s.Escaped = e.hole.conns.Load()
	}
	return s
}

// WriteMetrics writes the counters in the Prometheus text format for the
// host to merge into its own.
func (r *Renderer) WriteMetrics(w io.Writer) error {
	if err := writeMetrics(w, r.Stats()); err != nil {
		return fmt.Errorf("write metrics: %w", err)
	}
	return nil
}

var (
	_ stage.Plugin   = (*Renderer)(nil)
	_ stage.Renderer = (*Renderer)(nil)
)
