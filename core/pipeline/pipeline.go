// Package pipeline runs one conversion through the stages: reserve credits
// while parsing and styling, then render, store (for hosted output) and
// commit; a failure before the PDF is delivered refunds the reservation, as
// does an answer the caller could not deliver (see Result.Undelivered), and
// a failed commit after it leaves it held for the caller to charge again
// (see Result.Recharge). It knows nothing of HTTP or
// processes: stages are the interfaces of package stage, whether they live
// in plugin processes or in memory.
package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Stages are the stage implementations one run uses. A nil Meter runs
// without credits; a nil Sink is fine for binary output without an
// idempotency key.
type Stages struct {
	Meter    stage.Meter
	Parser   stage.Parser
	Styler   stage.Styler
	Renderer stage.Renderer
	Sink     stage.Sink
	// RendererCaps are the renderer's declared capabilities; they decide
	// which of HTML and the document tree it is sent.
	RendererCaps []string
	// RenderTimeout, SinkTimeout, ParseTimeout and StyleTimeout bound one
	// call of their stage (the operator's render.timeout, sink.timeout,
	// parse.timeout and style.timeout); 0: the request's deadline alone.
	RenderTimeout, SinkTimeout, ParseTimeout, StyleTimeout time.Duration
	// MeterTimeout bounds one call of the meter (meter.timeout), which runs
	// on past the request's deadline (see meterContext); 0: 10 s.
	MeterTimeout time.Duration
}

// within is ctx bounded by d as well, when d is set.
func within(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// Observer is told the outcome of every stage call; the host records it as
// metrics and in the request's log line. ctx is the context of the run
// (values only: a call after the answer, the commit, comes with it too).
// err is nil on success. Stages of one run may be called at the same time,
// so it must be safe for concurrent use.
type Observer func(ctx context.Context, stageName string, elapsed time.Duration, err error)

// Job is one conversion.
type Job struct {
	Principal stage.Principal
	Markdown  string
	Theme     string
	Page      stage.PageSize
	Numbering stage.Numbering
	Hosted    bool // output=url
	Credits   int64
	Watermark string // empty: none
	Lang      string // canonical BCP 47 tag; empty: not known

	// IdempotencyKey and RequestHash make a retry replay the first result.
	IdempotencyKey string
	RequestHash    string

	MaxHostedBytes int64         // 0: no limit
	TTL            time.Duration // lifetime of a hosted file
	ReplayTTL      time.Duration // lifetime of a binary result kept for idempotent replays
}

// Result is what a run produced.
type Result struct {
	PDF      []byte // binary output
	Pages    int
	Filename string // the download's name, from the document's title
	FileID   string
	URL      string // hosted output; empty URL with a FileID means the host serves it
	Replayed bool   // an idempotent retry: nothing was charged

	commit   func() error                    // charges once; nil: nothing to charge
	refund   func(string) (bool, error)      // gives the credits back instead, unless charged
	recharge func(ctx context.Context) error // charges again after commit failed
}

// Commit charges the credits reserved for the result. Finish leaves this to
// its caller, which answers the client first: the client has its PDF a
// meter round trip sooner. The meter call runs to its end even if the
// client has gone by then. When the charge fails, the error is returned
// and the credits stay reserved: the caller may try again with Recharge
// (an account database down for a moment, a failover), and the meter gives
// them back when the reservation expires. They are not refunded at once:
// a refund that went through would give the delivered PDF away for good.
// Committing a replay, a local render or a committed result does nothing
// more; the charge is made once, and its error is returned to every call.
//
// The charge does not wait for the caller past the point where the meter
// could give the credits back (a client slow to read the answer, a caller
// that never gets to Commit): Finish arms a timer, and Commit then waits
// for that charge. The end of the request's context does not charge: the
// client gone or the server cutting the answer at shutdown is what
// Undelivered is for, and a caller that delivers past the request's
// deadline still commits.
//
// After Undelivered has settled the result, Commit charges nothing and
// returns nil.
func (r *Result) Commit() error {
	if r == nil || r.commit == nil {
		return nil
	}
	return r.commit()
}

// Undelivered settles the result the other way: the caller could not
// deliver it in full (the client gone during the answer, a write that
// failed, a shutdown cutting it), so the reserved credits are refunded,
// with reason in the ledger, rather than charged. It reports whether this
// call refunded them. Nothing is refunded, and false returned with a nil
// error, when the charge was made already (the reservation near its
// release, a meter that does not say how long it holds one, an earlier
// Commit) or there is nothing to charge (a replay, a local render). A
// copy stored for idempotent replays is deleted with the refund: a retry
// with the same Idempotency-Key then converts and charges again, rather
// than replaying a result no one paid for. A refund that fails leaves the
// credits reserved until the meter releases the reservation; the error is
// returned. The result is settled once, by Undelivered or Commit,
// whichever comes first.
func (r *Result) Undelivered(reason string) (bool, error) {
	if r == nil || r.refund == nil {
		return false, nil
	}
	return r.refund(reason)
}

// Recharge returns the charge to make again after Commit failed, on a
// context of the caller's (each call bounded by the meter's timeout), or
// nil when there is nothing to charge. It holds the reservation and not the
// result, so a caller retrying for minutes does not keep the PDF in memory.
// A commit names its reservation: one that went through unseen before is
// not charged twice, and one the meter has given back meanwhile is refused.
// The charge returns ErrTooLate, without calling the meter, once the meter
// could give the credits back before the call ends.
func (r *Result) Recharge() func(ctx context.Context) error {
	if r == nil {
		return nil
	}
	return r.recharge
}

// ErrTooLate is a retried charge's answer once a retried charge could find the
// reservation released: the PDF is then given away.
var ErrTooLate = errors.New("the reservation may have been released: too late to charge")

// stored is what Commit records for idempotent replays.
type stored struct {
	FileID string `json:"fileId"`
	URL    string `json:"url,omitempty"`
	Pages  int    `json:"pages"`
}

// Pipeline runs jobs.
type Pipeline struct {
	observe Observer
	tokens  tokenCache
}

// New returns a pipeline that reports stage outcomes to observe (may be nil).
func New(observe Observer) *Pipeline {
	if observe == nil {
		observe = func(context.Context, string, time.Duration, error) {}
	}
	return &Pipeline{observe: observe}
}

// ErrAbandoned cancels the parse and style of a request that does not go
// ahead (its credits could not be reserved, its key failed, it replays);
// calls cut short by it are not observed, since the stages did not fail. A
// caller that cancels a preparation's context for such a reason gives it
// as the cause.
var ErrAbandoned = errors.New("abandoned")

// Preparation is a parse and style under way (see Start).
type Preparation struct {
	done      chan prepared
	reserved  chan struct{} // closed once the credits are reserved (see Finish)
	once      sync.Once
	abandon   context.CancelCauseFunc
	watermark string // the job's when started; styling depends on it
	result    *prepared
}

// Start parses and styles job's document in the background, for Finish to
// use: the caller can do its other work (checking the key, reserving
// credits) meanwhile. The caller must call Finish or Abandon.
func (p *Pipeline) Start(ctx context.Context, st Stages, job Job) *Preparation {
	pctx, abandon := context.WithCancelCause(ctx)
	pp := &Preparation{done: make(chan prepared, 1), reserved: make(chan struct{}), abandon: abandon, watermark: job.Watermark}
	go func() { pp.done <- p.prepare(pctx, st, job, pp.reserved) }()
	return pp
}

// goAhead tells the preparation that the credits are reserved: a render
// it holds back until then may start.
func (pp *Preparation) goAhead() { pp.once.Do(func() { close(pp.reserved) }) }

// Abandon stops the preparation and waits for it, so that no stage call
// outlives the request.
func (pp *Preparation) Abandon() {
	pp.abandon(ErrAbandoned)
	pp.wait()
}

func (pp *Preparation) wait() prepared {
	if pp.result == nil {
		r := <-pp.done
		pp.result = &r
		pp.abandon(nil) // release the context
	}
	return *pp.result
}

// Run converts job with the given stages and charges for it.
func (p *Pipeline) Run(ctx context.Context, st Stages, job Job) (*Result, error) {
	res, err := p.Finish(ctx, st, job, p.Start(ctx, st, job))
	if err != nil {
		return nil, err
	}
	if err := res.Commit(); err != nil {
		return nil, err
	}
	return res, nil
}

// Finish converts job, whose document prep is parsing and styling: it
// reserves the credits meanwhile (parsing and styling read nothing a
// reservation decides, so the request's latency has the longest of the
// three in it rather than their sum), then renders and stores. The credits
// stay reserved until the caller commits the result, once it has answered
// (see Result.Commit); on an error they have been refunded. prep is abandoned when the
// reservation fails or turns out to be a replay.
func (p *Pipeline) Finish(ctx context.Context, st Stages, job Job, prep *Preparation) (res *Result, err error) {
	if prep.watermark != job.Watermark {
		// Started on a guess of the plan that turned out wrong.
		prep.Abandon()
		prep = p.Start(ctx, st, job)
	}
	if st.Meter == nil {
		// Local renders (mdpress render) have no account to charge.
		prep.goAhead()
		pr := prep.wait()
		if pr.err != nil {
			return nil, pr.err
		}
		return p.produce(ctx, st, job, pr)
	}

	if err := ctx.Err(); err != nil {
		prep.Abandon()
		return nil, err // the client has gone, the deadline passed or the server cut it: nothing to reserve for
	}
	var reserve *stage.ReserveResponse
	mctx, mcancel := meterContext(ctx, st.MeterTimeout)
	defer mcancel()
	reserved := time.Now()
	err = p.call(ctx, stage.NameMeter, func() (e error) {
		reserve, e = st.Meter.Reserve(mctx, &stage.ReserveRequest{
			UserID: job.Principal.UserID, Credits: job.Credits,
			IdempotencyKey: job.IdempotencyKey, RequestHash: job.RequestHash,
		})
		return e
	})
	if err != nil || reserve.Replay != nil {
		prep.Abandon()
		if err != nil {
			return nil, err
		}
		return p.replay(ctx, st, job, reserve.Replay)
	}
	prep.goAhead()
	// The reservation was made after the call started: counting from then
	// errs on the early side.
	heldUntil := reserved.Add(reserve.Held)
	refund := func(reason string) error {
		// The client may be gone; the refund must still happen.
		rctx, cancel := meterContext(ctx, st.MeterTimeout)
		defer cancel()
		return p.call(rctx, stage.NameMeter, func() error {
			_, e := st.Meter.Refund(rctx, &stage.RefundRequest{ReservationID: reserve.ReservationID, Reason: reason})
			return e
		})
	}
	defer func() {
		if err != nil {
			_ = refund(stage.CodeOf(err).String())
		}
	}()

	pr := prep.wait()
	if pr.err != nil {
		return nil, pr.err
	}
	res, err = p.produce(ctx, st, job, pr)
	if err != nil {
		return nil, err
	}
	if err = ctx.Err(); err != nil {
		p.discard(ctx, st, res)
		return nil, err // gone, past its deadline or cut at shutdown: no PDF is delivered, so no charge
	}
	record, _ := json.Marshal(stored{FileID: res.FileID, URL: res.URL, Pages: res.Pages})
	chargeOn := func(ctx context.Context) error {
		cctx, ccancel := meterContext(ctx, st.MeterTimeout)
		defer ccancel()
		return p.call(cctx, stage.NameMeter, func() error {
			_, e := st.Meter.Commit(cctx, &stage.CommitRequest{ReservationID: reserve.ReservationID, Result: string(record)})
			return e
		})
	}
	charge := func() error { return chargeOn(ctx) }
	if reserve.Held <= 0 || time.Until(heldUntil) < lateCommitMargin {
		// A late commit could find the credits already given back by the
		// meter: charge before the client has the PDF, as a meter that does
		// not say how long it holds a reservation always is.
		if err = charge(); err != nil {
			p.discard(ctx, st, res)
			return nil, err
		}
		return res, nil
	}
	// The result is settled once: charged when the caller has delivered it
	// (or the hold nears its end), or refunded when it could not. The
	// deadline may fire before it exists: settling waits until it does.
	armed := make(chan struct{})
	var deadline *time.Timer
	var settle sync.Once
	var chargeErr error
	res.commit = func() error {
		settle.Do(func() {
			<-armed
			deadline.Stop()
			chargeErr = charge()
		})
		return chargeErr
	}
	res.refund = func(reason string) (refunded bool, err error) {
		settle.Do(func() {
			<-armed
			deadline.Stop()
			if err = refund(reason); err == nil {
				refunded = true
				// A copy kept for replays would outlive the reservation it
				// was made for, paid for by no one.
				p.discard(ctx, st, res)
			}
		})
		return refunded, err
	}
	res.recharge = func(ctx context.Context) error {
		// The same margin as for the first charge: the meter's timeout,
		// and clocks of replicas that disagree.
		if time.Until(heldUntil) < lateCommitMargin {
			return ErrTooLate
		}
		// Cancelled, the call must not start; once made, it runs to its
		// end as every meter call does (see meterContext).
		if err := ctx.Err(); err != nil {
			return err
		}
		return chargeOn(ctx)
	}
	late := func() { _ = res.commit() }
	deadline = time.AfterFunc(time.Until(heldUntil)-lateCommitMargin, late)
	close(armed)
	return res, nil
}

// discard deletes the stored file of a result that fails before the client
// is given it: refunded, it would otherwise stay in the sink, unpaid for,
// until it expired, days later. The call has a context of its own, as the
// request's has often ended by then; a sink that cannot delete leaves the
// file to expire.
func (p *Pipeline) discard(ctx context.Context, st Stages, res *Result) {
	d, ok := st.Sink.(stage.Deleter)
	if !ok || res.FileID == "" {
		return
	}
	timeout := st.SinkTimeout
	if timeout <= 0 {
		timeout = discardTimeout
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	start := time.Now()
	err := d.Delete(dctx, &stage.DeleteRequest{ID: res.FileID})
	if !errors.Is(err, errors.ErrUnsupported) {
		p.observe(ctx, stage.NameSink, time.Since(start), err)
	}
}

// discardTimeout bounds the delete of a discarded file when the operator
// sets no sink.timeout.
const discardTimeout = 10 * time.Second

// lateCommitMargin is how long a reservation must still be held for its
// commit to wait until the client has been answered: the meter's timeout
// and more, for clocks of replicas that disagree.
const lateCommitMargin = time.Minute

// defaultMeterTimeout bounds one call of the meter, made on a context of
// its own, when the operator sets no meter.timeout.
const defaultMeterTimeout = 10 * time.Second

// meterContext is the context of a call of the meter: once made, the call
// runs to its end even if the client leaves or the request's deadline
// passes. Cut short, its reply could be lost after the store acted on it,
// leaving a reservation the host cannot name (held until it expires, and
// retries of its Idempotency-Key answered "in progress" meanwhile) or a
// charge the client is told was refunded. Whether to make the call is
// decided on the request's context before.
func meterContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		d = defaultMeterTimeout
	}
	return context.WithTimeout(context.WithoutCancel(ctx), d)
}

// prepared is a parsed and styled document, or why it is not. When the
// renderer reads the tree in parts, the document is rendered too.
type prepared struct {
	parsed   *stage.ParseResponse
	styled   *stage.StyleResponse
	rendered *stage.RenderResponse
	treeOnly bool // the renderer reads the tree and not HTML
	htmlOnly bool // the renderer reads HTML and not the tree
	err      error
}

// prepare parses and styles. A renderer that declares what it reads is sent
// only that; one that reads only the tree spares the parser and the styler
// their HTML, and then styling, which yields only tokens that depend on the
// options and not on the document, runs beside the parse.
func (p *Pipeline) prepare(ctx context.Context, st Stages, job Job, reserved <-chan struct{}) prepared {
	if parser, renderer, ok := inParts(st); ok {
		return p.prepareInParts(ctx, st, job, parser, renderer, reserved)
	}
	html, tree := slices.Contains(st.RendererCaps, stage.CapReadsHTML), slices.Contains(st.RendererCaps, stage.CapReadsTree)
	pr := prepared{treeOnly: tree && !html, htmlOnly: html && !tree}
	style := func(doc stage.Document) (*stage.StyleResponse, error) {
		return p.style(ctx, st, job, doc, pr.treeOnly)
	}
	var early chan styleResult
	if pr.treeOnly {
		early = make(chan styleResult, 1)
		go func() {
			styled, err := style(stage.Document{})
			early <- styleResult{styled, err}
		}()
	}
	pctx, pcancel := within(ctx, st.ParseTimeout)
	pr.err = p.call(ctx, stage.NameParse, func() (e error) {
		pr.parsed, e = st.Parser.Parse(pctx, &stage.ParseRequest{Markdown: job.Markdown, SkipHTML: pr.treeOnly})
		return e
	})
	pcancel()
	if early != nil {
		r := <-early
		if pr.err == nil {
			pr.styled, pr.err = r.styled, r.err
		}
		return pr
	}
	if pr.err != nil {
		return pr
	}
	// The styler works on the HTML: the tree stays here.
	doc := pr.parsed.Document
	doc.Root, doc.Encoded = nil, nil
	pr.styled, pr.err = style(doc)
	return pr
}

type styleResult struct {
	styled *stage.StyleResponse
	err    error
}

// style styles doc for job, from the token cache when the answer depends on
// the options alone.
func (p *Pipeline) style(ctx context.Context, st Stages, job Job, doc stage.Document, treeOnly bool) (styled *stage.StyleResponse, err error) {
	req := &stage.StyleRequest{
		Document: doc, Theme: job.Theme, Page: job.Page,
		Numbering: job.Numbering, Watermark: job.Watermark, SkipHTML: treeOnly, Lang: job.Lang,
	}
	key, reusable := p.tokens.key(st.Styler, req)
	if reusable {
		if t, ok := p.tokens.get(key); ok {
			return &stage.StyleResponse{Tokens: t}, nil
		}
	}
	sctx, cancel := within(ctx, st.StyleTimeout)
	defer cancel()
	err = p.call(ctx, stage.NameStyle, func() (e error) {
		styled, e = st.Styler.Style(sctx, req)
		return e
	})
	if err == nil && reusable {
		p.tokens.put(key, styled.Tokens)
	}
	return styled, err
}

// produce renders a prepared document (unless the preparation did) and, for
// hosted output or an idempotent request, stores the PDF.
func (p *Pipeline) produce(ctx context.Context, st Stages, job Job, pr prepared) (*Result, error) {
	rendered := pr.rendered
	if rendered == nil {
		rreq := &stage.RenderRequest{
			HTML: pr.styled.HTML, Document: pr.parsed.Document, Tokens: pr.styled.Tokens,
			Page: job.Page, Numbering: job.Numbering, Watermark: job.Watermark, Lang: job.Lang,
		}
		switch {
		case pr.htmlOnly:
			rreq.Document.Root, rreq.Document.Encoded = nil, nil
		case pr.treeOnly:
			rreq.HTML, rreq.Document.HTML = "", ""
		}
		rctx, rcancel := within(ctx, st.RenderTimeout)
		defer rcancel()
		if err := p.call(ctx, stage.NameRender, func() (e error) {
			rendered, e = st.Renderer.Render(rctx, rreq)
			if e == nil {
				e = checkRendered(rendered)
			}
			return e
		}); err != nil {
			return nil, err
		}
	}
	res := &Result{PDF: rendered.PDF, Pages: rendered.Pages, Filename: Filename(pr.parsed.Document.Title)}

	keep := job.Hosted || job.IdempotencyKey != ""
	if !keep {
		return res, nil
	}
	ttl := job.TTL
	if !job.Hosted {
		ttl = job.ReplayTTL
	}
	if job.Hosted && job.MaxHostedBytes > 0 && int64(len(res.PDF)) > job.MaxHostedBytes {
		size := OverLimit(int64(len(res.PDF)), job.MaxHostedBytes)
		return nil, &stage.Error{Code: stage.CodeTooLarge,
			Message: "the PDF is larger than the hosted-file limit; request output=binary instead",
			Details: map[string]string{"size": size}}
	}
	var storedFile *stage.StoreResponse
	sctx, scancel := within(ctx, st.SinkTimeout)
	defer scancel()
	if err := p.call(ctx, stage.NameSink, func() (e error) {
		storedFile, e = st.Sink.Store(sctx, &stage.StoreRequest{
			Owner: job.Principal.UserID, Filename: res.Filename, PDF: res.PDF, TTL: ttl,
		})
		if e == nil {
			e = checkStored(storedFile)
		}
		return e
	}); err != nil {
		if storedFile != nil && storedFile.ID != "" {
			p.discard(ctx, st, &Result{FileID: storedFile.ID})
		}
		return nil, err
	}
	res.FileID, res.URL = storedFile.ID, storedFile.URL
	return res, nil
}

// checkRendered refuses a renderer's answer that is not a PDF. The host
// adds nothing to it, so a third-party renderer's empty or garbage answer
// would otherwise reach the client as a 200 application/pdf and be charged.
// The check is the header and the page count, not a parse: it is there to
// catch a broken plugin, not to vouch for the document.
func checkRendered(r *stage.RenderResponse) error {
	var why string
	switch {
	case r == nil || len(r.PDF) == 0:
		why = "an empty PDF"
	case !bytes.HasPrefix(r.PDF, []byte("%PDF-")):
		why = fmt.Sprintf("%d bytes that are not a PDF (they start %q)", len(r.PDF), r.PDF[:min(len(r.PDF), 16)])
	case r.Pages < 1:
		why = fmt.Sprintf("a PDF of %d pages", r.Pages)
	default:
		return nil
	}
	return stage.Wrap(stage.CodeInternal, fmt.Errorf("the renderer returned %s", why), "the renderer returned no valid PDF")
}

// checkStored refuses a sink's answer that no client could download from:
// the host serves an id at /v1/files/{id}, which an id with a / (a sink's
// directory layout, say) never matches, and a sink's own URL must be one a
// client can follow.
func checkStored(s *stage.StoreResponse) error {
	var why string
	switch {
	case s == nil:
		why = "no answer"
	case s.URL == "" && !stage.ValidFileID(s.ID):
		why = fmt.Sprintf("the id %.80q, which is not one URL path segment (letters, digits, . _ ~ - only)", s.ID)
	case s.URL != "":
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			why = fmt.Sprintf("the URL %.80q, which is not an absolute http or https URL", s.URL)
		}
	}
	if why == "" {
		return nil
	}
	return stage.Wrap(stage.CodeInternal, fmt.Errorf("the sink returned %s", why), "the sink could not host the PDF")
}

// replay answers an idempotent retry from the stored result.
func (p *Pipeline) replay(ctx context.Context, st Stages, job Job, r *stage.Replay) (*Result, error) {
	var s stored
	if err := json.Unmarshal([]byte(r.Result), &s); err != nil {
		return nil, stage.Wrap(stage.CodeInternal, err, "decode replay")
	}
	res := &Result{FileID: s.FileID, URL: s.URL, Pages: s.Pages, Replayed: true}
	// A hosted replay answers the URL, so the file behind it is checked
	// (its metadata alone) as a binary replay reads it: never a dead URL.
	length := int64(-1)
	if job.Hosted {
		length = 0
	}
	var body io.ReadCloser
	if err := p.call(ctx, stage.NameSink, func() error {
		o, e := st.Sink.Open(ctx, &stage.OpenRequest{ID: s.FileID, Length: length})
		if e == nil {
			body, res.Filename = o.Body, o.Filename
		}
		return e
	}); err != nil {
		if c := stage.CodeOf(err); c == stage.CodeNotFound || c == stage.CodeGone {
			// Paid for, but the kept copy is gone (expired, or another
			// replica's local disk): say so rather than a bare 404.
			return nil, stage.Wrap(stage.CodeInvalid, err,
				"the result of this Idempotency-Key is no longer available; send the request with a new key")
		}
		return nil, err
	}
	defer body.Close()
	if job.Hosted {
		return res, nil
	}
	pdf, err := io.ReadAll(body)
	if err != nil {
		return nil, stage.Wrap(stage.CodeInternal, err, "read replay")
	}
	res.PDF = pdf
	return res, nil
}

// call runs one stage call and observes its outcome, unless the call was
// cut short because the request does not go ahead or another stage of it
// failed: the stage did not fail.
func (p *Pipeline) call(ctx context.Context, name string, fn func() error) error {
	start := time.Now()
	err := fn()
	if err == nil || !(errors.Is(context.Cause(ctx), ErrAbandoned) || errors.Is(context.Cause(ctx), errCutShort) || errors.Is(err, errCutShort)) {
		p.observe(ctx, name, time.Since(start), err)
	}
	if err != nil {
		// Named for the log: a plugin's internal failure comes back as
		// "internal error" alone, its cause in the plugin's own log line.
		err = &stageFailure{stage: name, err: err}
	}
	return err
}

// stageFailure is a stage call's error with the stage's name; it is the
// call's error for errors.Is, errors.As and stage.CodeOf.
type stageFailure struct {
	stage string
	err   error
}

func (f *stageFailure) Error() string { return f.stage + ": " + f.err.Error() }
func (f *stageFailure) Unwrap() error { return f.err }

// HumanBytes formats n in SI units, e.g. "61.4 kB".
func HumanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}

// OverLimit says how big something is against its limit, e.g.
// "61.4 kB (limit 60.0 kB)", in exact bytes when rounding would make the two
// look equal.
func OverLimit(size, limit int64) string {
	s, l := HumanBytes(size), HumanBytes(limit)
	if s == l {
		s, l = fmt.Sprintf("%d bytes", size), fmt.Sprintf("%d bytes", limit)
	}
	return s + " (limit " + l + ")"
}

// bidiControl reports whether r is one of Unicode's explicit directional
// formatting characters (UAX #9).
func bidiControl(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// Filename turns a document title into a safe download name.
func Filename(title string) string {
	out := make([]rune, 0, len(title))
	for _, r := range title {
		switch {
		case bidiControl(r):
			// Shown, they would reorder the name: "x\u202Efdp.exe" reads as
			// "xexe.pdf".
			continue
		case r == '/' || r == '\\' || r == '"' || r < 0x20 || r == 0x7f:
			out = append(out, '-')
		default:
			out = append(out, r)
		}
		if len(out) >= 100 {
			break
		}
	}
	name := string(out)
	for len(name) > 0 && (name[0] == '.' || name[0] == ' ' || name[0] == '-') {
		name = name[1:]
	}
	if name == "" {
		name = "document"
	}
	return name + ".pdf"
}
