package chrome

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mdpress/mdpress/sdk/stage"
)

// pendingPoll is how often a tab looks whether its remote fetches are done.
const pendingPoll = 20 * time.Millisecond

// tab is one long-lived browser tab that prints one document at a time.
type tab struct {
	ctx     context.Context // the tab's life; a child of the browser's
	cancel  context.CancelFunc
	target  *chromedp.Target
	frame   cdp.FrameID
	js      bool
	renders int
	// pending counts remote fetches of the gate not yet answered.
	pending atomic.Int64
	// images is set when the tab's document holds data: images, which the
	// next document must not inherit.
	images bool
	// printAt is when the document's printing began (UnixNano), 0 before;
	// the memory watchdog matches it with a print compositor's start.
	printAt atomic.Int64
}

// openTab opens a tab on p, with its requests routed through g. ctx bounds
// only the opening: a tab lives until close.
func openTab(ctx context.Context, p *process, g *gate, js bool) (*tab, error) {
	tctx, cancel := chromedp.NewContext(p.ctx)
	t := &tab{ctx: tctx, cancel: cancel, js: js}
	done := make(chan error, 1)
	// chromedp binds a tab to the context of its first call, so the setup
	// runs on the tab's own context and ctx is watched beside it.
	go func() { done <- t.setup(g) }()
	select {
	case err := <-done:
		if err != nil {
			go cancel()
			return nil, err
		}
		return t, nil
	case <-ctx.Done():
		go cancel()
		return nil, ctx.Err()
	}
}

func (t *tab) setup(g *gate) error {
	if err := chromedp.Do(t.ctx); err != nil {
		return fmt.Errorf("open tab: %w", err)
	}
	t.target = chromedp.FromContext(t.ctx).Target
	tree, err := cdp.Call(t.ctx, t.target, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return fmt.Errorf("frame tree: %w", err)
	}
	t.frame = tree.FrameTree.Frame.ID
	// chromedp turns on domains for its queries; this tab makes none, and
	// the network and DOM agents keep every document's resources and nodes
	// for a debugger that never asks.
	for _, method := range []string{"Network.disable", "CSS.disable", "DOM.disable", "Log.disable", "Inspector.disable"} {
		if err := t.target.Call(t.ctx, method, nil, nil); err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
	}
	if !t.js {
		// Holds for every later document of this tab.
		if _, err := cdp.Call(t.ctx, t.target, emulation.SetScriptExecutionDisabled,
			emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			return fmt.Errorf("disable scripts: %w", err)
		}
	}
	// Print media for every later document of this tab, so that what is
	// measured before printing (fitTables) is laid out by the rules that
	// print.
	if _, err := cdp.Call(t.ctx, t.target, emulation.SetEmulatedMedia,
		emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
		return fmt.Errorf("emulate print media: %w", err)
	}
	// Subscribe before enabling, so that no paused request goes unanswered.
	paused := cdp.Events(t.ctx, t.target, fetch.RequestPaused)
	go g.serve(t.ctx, t.target, t.frame, paused, &t.pending)
	if _, err := cdp.Call(t.ctx, t.target, fetch.Enable, fetch.EnableParams{
		Patterns: []*fetch.RequestPattern{{URLPattern: "*"}},
	}); err != nil {
		return fmt.Errorf("enable interception: %w", err)
	}
	return nil
}

// close closes the tab. It waits for the browser, so callers on a request
// path run it in a goroutine.
func (t *tab) close() { t.cancel() }

// render prints html on paper of the given size and returns the PDF, of at
// most maxPages pages and maxBytes bytes.
func (t *tab) render(ctx context.Context, html string, size stage.PageSize, maxPages int, maxBytes int64) ([]byte, error) {
	t.renders++
	t.printAt.Store(0)
	if t.js || t.images {
		// setDocumentContent keeps the window and the resources of the
		// document before; a navigation, about 30 ms, gives the next one
		// fresh ones. A script's window would outlive its document, and
		// the images checked before printing would include the last
		// document's.
		if _, err := cdp.Call(ctx, t.target, page.Navigate, page.NavigateParams{URL: "about:blank"}); err != nil {
			return nil, fmt.Errorf("reset window: %w", err)
		}
		t.images = false
	}
	loads, unsubscribe := t.target.Subscribe(page.LoadEventFired.Method)
	defer unsubscribe()
	if _, err := cdp.Call(ctx, t.target, page.SetDocumentContent, page.SetDocumentContentParams{FrameID: t.frame, HTML: withFramePolicy(html)}); err != nil {
		return nil, fmt.Errorf("set document: %w", err)
	}
	if err := t.waitLoaded(ctx, loads); err != nil {
		return nil, fmt.Errorf("wait for load: %w", err)
	}
	// Chromium decodes images when it prints, not when it loads them.
	tree, err := cdp.Call(ctx, t.target, page.GetResourceTree, cdp.Empty{})
	if err != nil {
		return nil, fmt.Errorf("resource tree: %w", err)
	}
	t.images, err = checkImages(tree.FrameTree)
	if err != nil {
		return nil, err
	}
	// Markers first: a list widened for its numbers narrows the tables
	// in it.
	if _, err := t.fitMarkers(ctx); err != nil {
		return nil, fmt.Errorf("fit markers: %w", err)
	}
	if _, err := t.fitTables(ctx, size); err != nil {
		return nil, fmt.Errorf("fit tables: %w", err)
	}
	t.printAt.Store(time.Now().UnixNano())
	pdf, err := printPDF(ctx, t.target, printParams(size, maxPages), maxBytes)
	if errors.Is(err, errPDFTooLarge) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("print to pdf: %w", err)
	}
	// Printing loads the images only print uses, which stay among the
	// tab's resources: the next document, maybe another account's, must
	// not have them counted as its own.
	if !t.images {
		after, err := cdp.Call(ctx, t.target, page.GetResourceTree, cdp.Empty{})
		t.images = err != nil || holdsDataURLs(after.FrameTree)
	}
	return pdf, nil
}

// framePolicy keeps every frame that would load a URL empty. Chromium's
// browser process dies, and every tab's render with it, when a document
// set with Page.setDocumentContent holds an iframe of a data: URL followed
// by a srcdoc one: in about half of the renders on a new tab, with or
// without the Fetch gate; a navigation to the same HTML does not. Under
// this policy the data: frame never loads. A blocked frame prints as an
// empty box, not an error page. srcdoc frames are the document's own
// markup and still print, under the same policy.
const framePolicy = `<meta http-equiv="Content-Security-Policy" content="frame-src 'none'">`

// withFramePolicy puts framePolicy first in html, after the doctype (before
// it, the doctype would be ignored and the page laid out in quirks mode).
// Nothing of the document comes before it, and a document's own policies
// can only narrow it.
func withFramePolicy(html string) string {
	rest := strings.TrimLeft(html, "\ufeff \t\r\n\f")
	if len(rest) >= len("<!doctype") && strings.EqualFold(rest[:len("<!doctype")], "<!doctype") {
		if end := strings.IndexByte(rest, '>'); end >= 0 {
			at := len(html) - len(rest) + end + 1
			return html[:at] + framePolicy + html[at:]
		}
	}
	return framePolicy + html
}

// loadState is "loaded" once the document, its images and its fonts have
// loaded. A document set with setDocumentContent is complete at once, its
// images still loading; the gate's count of remote fetches was the only
// wait for them, and it counts a request once the paused event has crossed
// two goroutines, which a loaded machine took longer over than the page
// took to be complete. The render went on with its image loading: tables
// fitted without it, and counted as printing, which the memory watchdog
// blames first. The page sees its images loading whenever the gate learns
// of them. A lazy one may not load before printing; it is not waited for.
// DevTools evaluation runs even with page scripts disabled.
const loadState = `document.readyState !== "complete" ? document.readyState
	: Array.prototype.some.call(document.images, i => !i.complete && i.loading !== "lazy") ? "images"
	: document.fonts.ready.then(() => "loaded")`

// waitLoaded returns once the document, its images and its fonts have
// loaded. A load event may belong to an earlier document, so the state is
// read again after each one rather than trusted. Remote fetches the gate
// still runs do not hold the load event back; they are waited for here.
func (t *tab) waitLoaded(ctx context.Context, loads <-chan jsonv2.Value) error {
	for {
		state := ""
		if t.pending.Load() == 0 {
			var err error
			if state, err = t.eval(ctx, loadState, true); err != nil {
				return err
			}
		}
		if state == `"loaded"` && t.pending.Load() == 0 {
			return nil
		}
		// An image ends loading with no load event after it.
		var poll <-chan time.Time
		if t.pending.Load() > 0 || state == `"images"` {
			poll = time.After(pendingPoll)
		}
		select {
		case _, ok := <-loads:
			if !ok {
				return errors.New("tab closed while loading")
			}
		case <-poll:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// eval evaluates expr and returns its JSON value.
func (t *tab) eval(ctx context.Context, expr string, await bool) (string, error) {
	res, err := cdp.Call(ctx, t.target, runtime.Evaluate, runtime.EvaluateParams{
		Expression:    expr,
		ReturnByValue: new(true),
		AwaitPromise:  &await,
	})
	if err != nil {
		return "", err
	}
	if res.ExceptionDetails != nil {
		return "", fmt.Errorf("%s", res.ExceptionDetails.Text)
	}
	return string(res.Result.Value), nil
}

// printParams are the print settings. The paper is the requested size; the
// page margins are zero because the document's @page rule sets them, and
// that is also what makes Chromium lay out the @page margin boxes that
// carry the page numbers. Pages past maxPages+1 are not printed: one more
// than the limit is enough to tell that the document is over it.
func printParams(size stage.PageSize, maxPages int) chromedp.PDFOption {
	return func(p *page.PrintToPDFParams) {
		p.PageRanges = fmt.Sprintf("1-%d", maxPages+1)
		p.PaperWidth = size.WidthPt / 72
		p.PaperHeight = size.HeightPt / 72
		p.MarginTop, p.MarginRight, p.MarginBottom, p.MarginLeft = new(0.0), new(0.0), new(0.0), new(0.0)
		p.PreferCSSPageSize = new(false)
		p.PrintBackground = new(true)
		p.GenerateDocumentOutline = new(true)
		p.GenerateTaggedPDF = new(true)
		// A stream read in chunks has no message size cap.
		p.TransferMode = page.PrintToPDFTransferModeReturnAsStream
	}
}
