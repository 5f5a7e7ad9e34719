package chrome

import (
	"context"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"

	"github.com/mdpress/mdpress/plugins/render-chrome/chrome/egress"
)

// verdict is what happens to one request a document makes.
type verdict int

const (
	deny   verdict = iota // fail as blocked by the client
	abort                 // fail silently: a navigation or a frame
	inline                // data: is in the document already; let it through
	remote                // the plugin fetches it and answers for the browser
)

// decide is the default-deny policy for one paused request. Address checks
// happen later, in the fetcher, where the address is known.
func decide(ev *fetch.EventRequestPaused, mainFrame cdp.FrameID, allowRemote bool) verdict {
	u, err := url.Parse(ev.Request.URL)
	if err != nil {
		return deny
	}
	scheme := strings.ToLower(u.Scheme)
	doc := ev.ResourceType == network.ResourceTypeDocument
	switch {
	case doc && ev.FrameID == mainFrame:
		// A meta refresh or a script moving the page away from the
		// document we print. An aborted navigation commits no error page.
		return abort
	case scheme == "data":
		return inline
	case doc:
		// Frames, objects and embeds with a document: a blocked one would
		// print Chromium's "blocked" page into the PDF.
		return abort
	case (scheme == "http" || scheme == "https") && allowRemote &&
		ev.Request.Method == http.MethodGet && ev.ResponseStatusCode == 0 && ev.ResponseErrorReason == "":
		return remote
	}
	return deny
}

// gate answers the paused requests of a tab.
type gate struct {
	allowRemote bool
	fetcher     *egress.Fetcher
	log         *slog.Logger
	stats       *stats
}

// maxFetchesPerTab bounds the remote fetches one document runs at once, as
// a browser bounds connections per host.
const maxFetchesPerTab = 6

// serve answers each paused request of a tab until the tab closes. pending
// counts the remote fetches not yet answered: Chromium's load event does not
// wait for them, so the tab does.
func (g *gate) serve(ctx context.Context, s cdp.Session, mainFrame cdp.FrameID, paused iter.Seq2[fetch.EventRequestPaused, error], pending *atomic.Int64) {
	sem := make(chan struct{}, maxFetchesPerTab)
	for ev, err := range paused {
		if err != nil {
			return
		}
		switch decide(&ev, mainFrame, g.allowRemote) {
		case inline:
			go answer(ctx, s, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		case remote:
			pending.Add(1)
			go func() {
				defer pending.Add(-1)
				g.fetch(ctx, s, ev, sem)
			}()
		case abort:
			g.stats.blocked.Add(1)
			g.log.Debug("request aborted", "url", redactURL(ev.Request.URL), "type", ev.ResourceType)
			go g.fail(ctx, s, ev.RequestID, network.ErrorReasonAborted)
		default:
			g.stats.blocked.Add(1)
			g.log.Debug("request blocked", "url", redactURL(ev.Request.URL), "type", ev.ResourceType)
			go g.fail(ctx, s, ev.RequestID, network.ErrorReasonBlockedByClient)
		}
	}
}

func (g *gate) fetch(ctx context.Context, s cdp.Session, ev fetch.EventRequestPaused, sem chan struct{}) {
	select {
	case sem <- struct{}{}:
		defer func() { <-sem }()
	case <-ctx.Done():
		return
	}
	res, err := g.fetcher.Fetch(ctx, ev.Request.URL)
	if err != nil {
		g.stats.blocked.Add(1)
		g.log.Debug("remote resource refused", "url", redactURL(ev.Request.URL), "err", err)
		g.fail(ctx, s, ev.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	g.stats.fetched.Add(1)
	var headers []*fetch.HeaderEntry
	if res.ContentType != "" {
		headers = append(headers, &fetch.HeaderEntry{Name: "Content-Type", Value: res.ContentType})
	}
	if res.AllowOrigin != "" {
		headers = append(headers, &fetch.HeaderEntry{Name: "Access-Control-Allow-Origin", Value: res.AllowOrigin})
	}
	answer(ctx, s, fetch.FulfillRequest, fetch.FulfillRequestParams{
		RequestID:       ev.RequestID,
		ResponseCode:    int64(res.Status),
		ResponseHeaders: headers,
		Body:            res.Body,
	})
}

func (g *gate) fail(ctx context.Context, s cdp.Session, id fetch.RequestID, reason network.ErrorReason) {
	answer(ctx, s, fetch.FailRequest, fetch.FailRequestParams{RequestID: id, ErrorReason: reason})
}

// answer sends the browser what to do with a paused request. It fails only
// when the tab or the request is gone, which needs no handling.
func answer[P any](ctx context.Context, s cdp.Session, cmd cdp.Command[P, cdp.Empty], params P) {
	_, _ = cdp.Call(ctx, s, cmd, params)
}

// redactURL keeps logs short and free of data: payloads and query strings.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable)"
	}
	if strings.EqualFold(u.Scheme, "data") {
		return "data:…"
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	s := u.String()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
