package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mdpress/mdpress/core/apierr"
	"github.com/mdpress/mdpress/core/disposition"
	"github.com/mdpress/mdpress/core/pipeline"
	"github.com/mdpress/mdpress/core/request"
	"github.com/mdpress/mdpress/host/metrics"
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"
)

func (s *Server) convert(w http.ResponseWriter, r *http.Request) {
	token, ok := bearer(w, r)
	if !ok {
		return
	}
	// The body is held against the bound from its first byte until the
	// answer, while it waits for a slot and is converted.
	held := &heldBody{ReadCloser: r.Body, b: s.bodies}
	defer held.release()
	if hint, counted, ok := s.earlyHint(token); ok {
		s.convertEarly(w, r, held, token, hint, counted)
		return
	}
	principal, ok := s.authenticate(w, r, token)
	if !ok || !s.allowRate(w, principal) {
		return
	}
	conv, idemKey, ok := s.readConversion(w, r, held)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opt.RequestTimeout)
	defer cancel()
	release, err := s.admit.enter(ctx, principal.KeyID, principal.UserID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer release()
	stages, err := s.pipelineStages(ctx, keepsFile(conv, idemKey))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	job := s.job(conv, idemKey, principal)
	res, err := s.pipe.Finish(ctx, stages, job, s.pipe.Start(ctx, stages, job))
	release()
	s.deliver(w, r, held, job, res, err)
}

// earlyHint returns what the last check said about token when its request
// may take the early path: the key authenticated a moment ago, and the
// request is now counted against its rate limit (at the limit returned).
// Counting it here, before the body is read, keeps requests sent at once
// from taking more slots, queue places and parses than the limit allows. A
// request over the limit takes the ordinary path, where the checked key's
// plan refuses it.
func (s *Server) earlyHint(token string) (recentKey, int64, bool) {
	hint, ok := s.recent.get(token)
	if !ok {
		return recentKey{}, 0, false
	}
	counted, allowed := s.limiter.allowEarly(hint.keyID, hint.perMin)
	return hint, counted, allowed
}

// convertEarly serves a request whose key authenticated a moment ago: its
// document is read, parsed and styled while the key is checked again, which
// takes the check off the request's latency. The key is only a hint here:
// nothing is charged, stored or answered before it authenticates. The
// request has been counted against the key's rate limit (at the limit
// counted); when its check fails, the request stops waiting for a slot and
// parsing at once, and a key the auth stage refuses is forgotten, so a
// revoked key costs at most the parses of the requests it sent before a
// failed check answered, within its rate limit.
func (s *Server) convertEarly(w http.ResponseWriter, r *http.Request, held *heldBody, token string, hint recentKey, counted int64) {
	keyOK, keyFailed := context.WithCancelCause(r.Context())
	defer keyFailed(nil)
	type authResult struct {
		principal stage.Principal
		err       error
	}
	authed := make(chan authResult, 1)
	go func() {
		p, err := s.checkKey(r.Context(), token)
		if err != nil {
			keyFailed(pipeline.ErrAbandoned) // stops the wait for a slot and the parse
		}
		authed <- authResult{p, err}
	}()
	// await answers for the key; a failed check has been answered to the
	// client when it returns false.
	await := func() (stage.Principal, bool) {
		a := <-authed
		if a.err != nil { // checkKey has forgotten a refused key
			s.authFailed(w, r, a.err)
			return stage.Principal{}, false
		}
		if a.principal.KeyID == hint.keyID && a.principal.Plan.RateLimitPerMin == counted {
			return a.principal, true // counted at this limit already
		}
		// The plan changed since the key's bucket was made: its limit
		// decides, on a bucket made for it.
		return a.principal, s.allowRate(w, a.principal)
	}

	conv, idemKey, err := s.decodeConversion(w, r, held)
	if err != nil {
		if _, ok := await(); ok {
			s.failRequest(w, r, err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(keyOK, s.opt.RequestTimeout)
	defer cancel()
	release, err := s.admit.enter(ctx, hint.keyID, hint.userID)
	if err != nil {
		if _, ok := await(); ok {
			s.fail(w, r, err)
		}
		return
	}
	defer release()
	stages, err := s.pipelineStages(ctx, keepsFile(conv, idemKey))
	if err != nil {
		if _, ok := await(); ok {
			s.fail(w, r, err)
		}
		return
	}
	// The plan decides the watermark, which styling reads: start with the
	// plan the key had; Finish starts again in the rare case it changed.
	guess := s.job(conv, idemKey, stage.Principal{Plan: stage.Plan{Watermark: hint.watermark}})
	prep := s.pipe.Start(ctx, stages, guess)
	principal, ok := await()
	if !ok {
		prep.Abandon()
		return
	}
	job := s.job(conv, idemKey, principal)
	res, err := s.pipe.Finish(ctx, stages, job, prep)
	release()
	s.deliver(w, r, held, job, res, err)
}

// job is the pipeline's view of one conversion.
func (s *Server) job(conv *request.Conversion, idemKey string, principal stage.Principal) pipeline.Job {
	job := pipeline.Job{
		Principal: principal, Markdown: conv.Markdown, Theme: conv.Theme, Page: conv.Page,
		Numbering: conv.Numbering, Lang: conv.Lang, Hosted: conv.Output == request.OutputURL, Credits: s.opt.CreditsPerConversion,
		IdempotencyKey: idemKey, RequestHash: hashConversion(conv),
		MaxHostedBytes: s.opt.MaxHostedBytes, TTL: s.ttl(principal.Plan), ReplayTTL: s.opt.ReplayTTL,
	}
	if principal.Plan.Watermark {
		job.Watermark = s.opt.WatermarkText
	}
	return job
}

// allowRate applies the plan's rate limit, answering 429 when it is spent.
func (s *Server) allowRate(w http.ResponseWriter, principal stage.Principal) bool {
	ok, retry := s.limiter.allow(principal.KeyID, principal.Plan.RateLimitPerMin)
	if ok {
		return true
	}
	e := apierr.New(http.StatusTooManyRequests, apierr.NameRateLimited,
		fmt.Sprintf("rate limit of the %s plan exceeded (%d requests per minute)", principal.Plan.Name, principal.Plan.RateLimitPerMin)).
		WithHint("wait for the Retry-After delay, or move to a plan with a higher limit")
	e.RetryAfter = retry
	writeError(w, e)
	return false
}

// readConversion reads and decodes the request body, answering the client
// itself when it fails.
func (s *Server) readConversion(w http.ResponseWriter, r *http.Request, held *heldBody) (*request.Conversion, string, bool) {
	conv, idemKey, err := s.decodeConversion(w, r, held)
	if err != nil {
		s.failRequest(w, r, err)
		return nil, "", false
	}
	return conv, idemKey, true
}

// requestError is a body that could not be used, with its answer.
type requestError struct {
	api   *apierr.Error // answered as is
	stage error         // answered through fail
}

func (e *requestError) Error() string { return "bad request" }

func (s *Server) failRequest(w http.ResponseWriter, r *http.Request, err error) {
	var re *requestError
	if errors.As(err, &re) && re.api != nil {
		writeError(w, re.api)
		return
	}
	if errors.As(err, &re) {
		err = re.stage
	}
	s.fail(w, r, err)
}

// bodyTooLarge is the 413 of a request body past limit.
func bodyTooLarge(r *http.Request, limit int64) *apierr.Error {
	e := apierr.New(http.StatusRequestEntityTooLarge, apierr.NameTooLarge, "the request body is larger than the input limit").
		WithHint("send less Markdown per request")
	// Reading stops at the limit; Content-Length, when sent, says how big.
	e.Body.Size = fmt.Sprintf("more than %d bytes (limit %s)", limit, pipeline.HumanBytes(limit))
	if r.ContentLength > limit {
		e.Body.Size = pipeline.OverLimit(r.ContentLength, limit)
	}
	return e
}

// notJSON is the 400 of a body that is no JSON and was labelled as
// something else: a form (curl -F, --data-urlencode) or raw Markdown
// (text/markdown). "The request body is not valid JSON" at position 1 read
// as a typo in a JSON body the client never meant to send. JSON under
// another label (curl -d sends it as a form) is still converted, and
// JSON with a mistake in it keeps its own error: a body that opens an
// object was meant as JSON, and so was one under a label naming JSON that
// does not parse ("json", "application/json; charset"). Told it was no
// JSON, its sender changed the label and only then learnt of the typo at
// its position.
func notJSON(r *http.Request, body []byte) *apierr.Error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = ct
	}
	// UTF-16 JSON is told its encoding: told it was no JSON, its sender
	// changed the label, then learnt it was "not valid JSON" at position 1.
	if ct == "" || len(bytes.TrimSpace(body)) == 0 || strings.Contains(strings.ToLower(mt), "json") || opensObject(body) || json.Valid(body) || request.UTF16(body) {
		return nil
	}
	const most = 100 // a header can be long; the answer repeats only this much of it
	if len(mt) > most {
		mt = mt[:most] + "..."
	}
	mt = strings.ToValidUTF8(mt, "")
	return apierr.New(http.StatusBadRequest, apierr.NameInvalidRequest, fmt.Sprintf("the request body is %s, not JSON", mt)).
		WithDetails(map[string]any{"field": "Content-Type", "received": mt, "allowed": "application/json"}).
		WithHint(`send the Markdown as a JSON string, {"markdown": "# Hello"}, with Content-Type: application/json; ` +
			`a file: jq -Rs '{markdown: .}' notes.md | curl -H 'Content-Type: application/json' -d @- ...`)
}

// opensObject reports whether body's first character, past white space
// and a byte order mark (Windows editors write one), opens a JSON object.
func opensObject(body []byte) bool {
	rest := bytes.TrimLeft(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(rest) > 0 && rest[0] == '{'
}

// transforming are the registered content codings that change a body's
// bytes (IANA HTTP Content Coding Registry).
var transforming = map[string]bool{
	"gzip": true, "x-gzip": true, "deflate": true, "compress": true, "x-compress": true,
	"br": true, "zstd": true, "dcb": true, "dcz": true, "aes128gcm": true, "exi": true, "pack200-gzip": true,
}

// encoded is the 400 of a body sent compressed (Content-Encoding: gzip, as
// some HTTP clients send large bodies): net/http does not decode a
// request's body, and the compressed bytes were "not valid JSON" at
// position 1, which sent the client looking for a typo. Only a coding that
// changes the bytes is refused: clients that put a charset there
// ("Content-Encoding: utf-8") send the JSON as it is, and were served
// before this check.
func encoded(r *http.Request) *apierr.Error {
	values := r.Header.Values("Content-Encoding")
	if len(values) == 0 {
		return nil // every request but the rare one: nothing to split
	}
	ce := strings.TrimSpace(strings.Join(values, ", "))
	if !slices.ContainsFunc(strings.Split(ce, ","), func(c string) bool {
		return transforming[strings.ToLower(strings.TrimSpace(c))]
	}) {
		return nil
	}
	const most = 100 // as notJSON repeats of a header
	if len(ce) > most {
		ce = ce[:most] + "..."
	}
	ce = strings.ToValidUTF8(ce, "")
	return apierr.New(http.StatusBadRequest, apierr.NameInvalidRequest, fmt.Sprintf("the request body is encoded (%s); send it uncompressed", ce)).
		WithDetails(map[string]any{"field": "Content-Encoding", "received": ce, "allowed": "identity"}).
		WithHint("leave out Content-Encoding and send the JSON as it is")
}

// decodeConversion reads the body through held, within the input limit and
// the held-body bound, and decodes it, with the Idempotency-Key header. The
// caller releases held when it has answered.
func (s *Server) decodeConversion(w http.ResponseWriter, r *http.Request, held *heldBody) (*request.Conversion, string, error) {
	if r.ContentLength > s.opt.MaxBodyBytes {
		// Refused on its declared length, before a byte of it: read up to
		// the limit first, a client that had asked to continue was told
		// to send it, and uploaded the limit and more for the same 413.
		return nil, "", &requestError{api: bodyTooLarge(r, s.opt.MaxBodyBytes)}
	}
	if e := encoded(r); e != nil {
		return nil, "", &requestError{api: e}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, held, s.opt.MaxBodyBytes))
	if err != nil {
		if isBodiesFull(err) {
			// Read the rest without holding it, so that the client, still
			// sending, gets the 429 rather than a reset connection.
			_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, s.opt.MaxBodyBytes))
			return nil, "", &requestError{stage: err}
		}
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, "", &requestError{api: bodyTooLarge(r, tooBig.Limit)}
		}
		return nil, "", &requestError{stage: stage.Wrap(stage.CodeInvalid, err, "the request body could not be read")}
	}
	conv, err := request.Decode(body)
	if err != nil {
		if e := notJSON(r, body); e != nil {
			return nil, "", &requestError{api: e}
		}
		return nil, "", &requestError{stage: err}
	}
	idemKey := r.Header.Get("Idempotency-Key")
	if len(idemKey) > 255 {
		return nil, "", &requestError{api: apierr.New(http.StatusBadRequest, apierr.NameInvalidRequest, "the Idempotency-Key header is longer than 255 characters").
			WithDetails(map[string]any{"field": "Idempotency-Key", "received": fmt.Sprintf("%d characters", len(idemKey)), "allowed": "at most 255 characters"}).
			WithHint("use a shorter key, such as a UUID")}
	}
	if !utf8.ValidString(idemKey) {
		// It reaches the meter as a protobuf string, which must be UTF-8:
		// the call failed to marshal and the client was told 500.
		return nil, "", &requestError{api: apierr.New(http.StatusBadRequest, apierr.NameInvalidRequest, "the Idempotency-Key header is not valid UTF-8").
			WithDetails(map[string]any{"field": "Idempotency-Key", "received": "bytes that are not UTF-8", "allowed": "UTF-8 text of at most 255 characters"}).
			WithHint("use a key of ASCII letters, digits and dashes, such as a UUID")}
	}
	return conv, idemKey, nil
}

// deliver answers a finished conversion, then commits its charge: the
// client does not wait for the meter. A PDF that was not written out in
// full (the client gone, a shutdown cutting the answer) is refunded
// instead: its client never had it. A write the connection took counts as
// delivered, as the server can know no more; a hosted URL's answer stays
// charged whatever became of it, since the file is stored and a retry with
// the same Idempotency-Key is answered the same URL without a new charge.
// It runs without a conversion slot: a client that does not read its PDF
// held the slot until the write timeout (three minutes by default), so two
// clients per core stopped all conversions. The PDF is counted with the
// request's body instead, so that answers waiting for their clients are
// bounded with the bodies.
func (s *Server) deliver(w http.ResponseWriter, r *http.Request, held *heldBody, job pipeline.Job, res *pipeline.Result, err error) {
	if err != nil {
		s.fail(w, r, err) // the client gone too: the reservation was refunded
		return
	}
	held.hold(int64(len(res.PDF)))
	logOf(r.Context()).result(res.Pages, res.Replayed)
	if err := s.answer(w, r, job, res); err != nil && !job.Hosted {
		s.undelivered(r, job, res, err)
		return
	}
	// Values, not the job and result: a retried charge holds neither the
	// document nor the PDF for its minutes.
	credits, pages, size := job.Credits, res.Pages, len(res.PDF)
	delivered := func() { s.metrics.Delivered(credits, pages, size) }
	if err := res.Commit(); err != nil {
		// The client has its PDF and the credits are still reserved.
		s.charges.retry(requestID(r.Context()), res.Recharge(), err, delivered)
		return
	}
	if !res.Replayed {
		delivered()
	}
}

// undelivered settles a PDF whose answer was cut (why): its credits are
// refunded, unless the charge was made already, and the request's log
// line, the metrics and the server log say which.
func (s *Server) undelivered(r *http.Request, job pipeline.Job, res *pipeline.Result, why error) {
	refunded, err := res.Undelivered(undeliveredReason)
	outcome := metrics.UndeliveredRefunded
	switch {
	case res.Replayed:
		outcome = metrics.UndeliveredNone
	case err != nil:
		outcome = metrics.UndeliveredHeld
	case !refunded:
		// Charged before the cut: the reservation neared its release, or
		// the meter does not say how long it holds one.
		outcome = metrics.UndeliveredCharged
		s.metrics.Delivered(job.Credits, res.Pages, len(res.PDF))
	}
	s.metrics.Undelivered(outcome)
	logOf(r.Context()).undelivered(outcome)
	attrs := []any{"requestId", requestID(r.Context()), "credits", outcome, "why", why}
	if err != nil {
		s.log.Error("answer cut, and its refund failed: the credits stay reserved until the reservation expires", append(attrs, "err", err)...)
		return
	}
	s.log.Info("answer cut before the whole PDF was sent", attrs...)
}

// undeliveredReason is the ledger's reason for the refund of a PDF whose
// answer was cut.
const undeliveredReason = "undelivered: the answer was cut before the whole PDF was sent"

// DrainCharges gives the charges of delivered PDFs still being retried
// until ctx ends (the shutdown's drain window), then abandons them, with a
// log line counting them: the meter's sweeper refunds their reservations
// when they expire. Call it once the server has stopped serving, while the
// meter still runs.
func (s *Server) DrainCharges(ctx context.Context) {
	if n := s.charges.drain(ctx); n > 0 {
		s.log.Warn("shutdown: charges of delivered PDFs still being retried abandoned; their credits go back when their reservations expire", "count", n)
	}
}

// answer writes a conversion's result out to the client, so that it has
// the whole answer before the charge is committed. It returns why the
// answer was not handed to the connection in full, if it was not.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, job pipeline.Job, res *pipeline.Result) error {
	if res.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	if job.Hosted {
		url := res.URL
		if url == "" {
			url = s.opt.PublicURL + "/v1/files/" + res.FileID
		}
		writeJSON(w, http.StatusOK, map[string]string{"url": url})
	} else {
		w.Header().Set("Content-Type", "application/pdf")
		// Named as its hosted copy is: without it curl -OJ, wget
		// --content-disposition and a browser's save saved the PDF as
		// "markdown", the path's last segment, with no .pdf.
		w.Header().Set("Content-Disposition", disposition.Inline(res.Filename))
		w.Header().Set("Content-Length", strconv.Itoa(len(res.PDF)))
		w.Header().Set("Cache-Control", "no-store")
		if res.Pages > 0 {
			w.Header().Set("X-Pdf-Pages", strconv.Itoa(res.Pages))
		}
		w.WriteHeader(http.StatusOK)
		// Paced as a download is: a client that reads slowly gets its whole
		// PDF past the write timeout, and one that stops reading is cut
		// after a minute, where the write timeout held the PDF for three.
		if err := s.streamBytes(w, r, res.PDF, "answer"); err != nil {
			return err
		}
	}
	// The response's buffer holds the last bytes until this writes them.
	return http.NewResponseController(w).Flush()
}

func (s *Server) pipelineStages(ctx context.Context, sink bool) (pipeline.Stages, error) {
	st := pipeline.Stages{RenderTimeout: s.opt.RenderTimeout, SinkTimeout: s.opt.SinkTimeout,
		ParseTimeout: s.opt.ParseTimeout, StyleTimeout: s.opt.StyleTimeout, MeterTimeout: s.opt.MeterTimeout}
	for _, name := range []string{stage.NameMeter, stage.NameParse, stage.NameStyle, stage.NameRender, stage.NameSink} {
		if name == stage.NameSink && !sink {
			continue
		}
		c, err := s.client(ctx, name)
		if err != nil {
			return st, err
		}
		switch name {
		case stage.NameMeter:
			st.Meter = liveMeter{s}
		case stage.NameParse:
			st.Parser = c
		case stage.NameStyle:
			st.Styler = liveStyler{s, c}
		case stage.NameRender:
			st.Renderer = liveRenderer{s, c}
			st.RendererCaps = s.stages.Capabilities(stage.NameRender)
		case stage.NameSink:
			st.Sink = liveSink{s, c}
		}
	}
	return st, nil
}

// keepsFile reports whether a conversion stores its PDF in the sink: as the
// hosted file, or as the copy kept for replays of its Idempotency-Key. One
// that does not, a plain binary answer, runs without the sink: an S3
// outage, or sink-s3 relaunching meanwhile, failed every conversion with a
// 500 after waiting for the sink's relaunch, though none used it.
func keepsFile(conv *request.Conversion, idemKey string) bool {
	return conv.Output == request.OutputURL || idemKey != ""
}

// liveMeter finds the meter's live client at each call. A conversion
// reserves, then commits or refunds seconds later: with the client taken
// at the request's start, a meter relaunched meanwhile (a crash, failing
// health checks) left the commit and the refund on the dead process, so
// both failed and the reservation stayed open until the meter's sweeper
// released it, the PDF given away and a retry with the same
// Idempotency-Key refused as still in progress until then.
type liveMeter struct{ s *Server }

func (m liveMeter) Reserve(ctx context.Context, req *stage.ReserveRequest) (*stage.ReserveResponse, error) {
	c, err := m.s.client(ctx, stage.NameMeter)
	if err != nil {
		return nil, err
	}
	return c.Reserve(ctx, req)
}

func (m liveMeter) Commit(ctx context.Context, req *stage.CommitRequest) (*stage.CommitResponse, error) {
	c, err := m.s.client(ctx, stage.NameMeter)
	if err != nil {
		return nil, err
	}
	return c.Commit(ctx, req)
}

func (m liveMeter) Refund(ctx context.Context, req *stage.RefundRequest) (*stage.RefundResponse, error) {
	c, err := m.s.client(ctx, stage.NameMeter)
	if err != nil {
		return nil, err
	}
	return c.Refund(ctx, req)
}

func (m liveMeter) Account(ctx context.Context, req *stage.AccountRequest) (*stage.AccountResponse, error) {
	c, err := m.s.client(ctx, stage.NameMeter)
	if err != nil {
		return nil, err
	}
	return c.Account(ctx, req)
}

var _ stage.Meter = liveMeter{}

// fresh is c, the stage's client taken at the request's start, or the
// stage's live client when c's connection has gone down since: a plugin
// killed while idle meanwhile (the OOM killer, an operator) is found dead
// and relaunched on the next request, but the call held its client and
// was sent to the dead one's socket. Asking the connection costs no
// system call, so the call on a plugin that lives reads /proc no more.
func (s *Server) fresh(ctx context.Context, stageName string, c *sdkplugin.Client) (*sdkplugin.Client, error) {
	if c.Connected() {
		return c, nil
	}
	return s.client(ctx, stageName)
}

// liveStyler styles on a fresh client: a renderer that reads HTML has the
// HTML styled after the whole parse.
type liveStyler struct {
	s *Server
	c *sdkplugin.Client
}

func (l liveStyler) Style(ctx context.Context, req *stage.StyleRequest) (*stage.StyleResponse, error) {
	c, err := l.s.fresh(ctx, stage.NameStyle, l.c)
	if err != nil {
		return nil, err
	}
	return c.Style(ctx, req)
}

// liveRenderer renders on a fresh client: the render waits for the parse
// and the reservation, for a long document a good part of a second.
type liveRenderer struct {
	s *Server
	c *sdkplugin.Client
}

func (l liveRenderer) Render(ctx context.Context, req *stage.RenderRequest) (*stage.RenderResponse, error) {
	c, err := l.s.fresh(ctx, stage.NameRender, l.c)
	if err != nil {
		return nil, err
	}
	return c.Render(ctx, req)
}

func (l liveRenderer) RenderParts(ctx context.Context, req *stage.RenderRequest, parts stage.Parts) (*stage.RenderResponse, error) {
	c, err := l.s.fresh(ctx, stage.NameRender, l.c)
	if err != nil {
		return nil, err
	}
	return c.RenderParts(ctx, req, parts)
}

// liveSink stores on a fresh client: the store follows the render, seconds
// after the request's start.
type liveSink struct {
	s *Server
	c *sdkplugin.Client
}

func (l liveSink) Store(ctx context.Context, req *stage.StoreRequest) (*stage.StoreResponse, error) {
	c, err := l.s.fresh(ctx, stage.NameSink, l.c)
	if err != nil {
		return nil, err
	}
	return c.Store(ctx, req)
}

func (l liveSink) Open(ctx context.Context, req *stage.OpenRequest) (*stage.OpenResponse, error) {
	c, err := l.s.fresh(ctx, stage.NameSink, l.c)
	if err != nil {
		return nil, err
	}
	return c.Open(ctx, req)
}

func (l liveSink) Delete(ctx context.Context, req *stage.DeleteRequest) error {
	c, err := l.s.fresh(ctx, stage.NameSink, l.c)
	if err != nil {
		return err
	}
	return c.Delete(ctx, req)
}

var (
	_ stage.Styler       = liveStyler{}
	_ stage.PartRenderer = liveRenderer{}
	_ stage.Sink         = liveSink{}
	_ stage.Deleter      = liveSink{}
)

// ttl is how long a hosted file lives: at least MinTTL (7 days), longer
// when the plan retains data.
func (s *Server) ttl(p stage.Plan) time.Duration {
	ttl := s.opt.MinTTL
	if r := time.Duration(p.RetentionDays) * 24 * time.Hour; r > ttl {
		ttl = r
	}
	return ttl
}

func hashConversion(c *request.Conversion) string {
	h := sha256.New()
	for _, part := range []string{c.Markdown, c.Output, c.Theme, string(c.Numbering), c.Page.Name} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	// Only a given lang is hashed, so that the hash of a request without
	// one, and the replays kept under it, are those from before lang was
	// an option.
	if c.Lang != "" {
		fmt.Fprintf(h, "lang=%d:%s;", len(c.Lang), c.Lang)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (s *Server) userInfo(w http.ResponseWriter, r *http.Request) {
	token, ok := bearer(w, r)
	if !ok {
		return
	}
	principal, ok := s.authenticate(w, r, token)
	if !ok {
		return
	}
	c, err := s.client(r.Context(), stage.NameMeter)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opt.MeterTimeout)
	defer cancel()
	start := time.Now()
	acct, err := c.Account(ctx, &stage.AccountRequest{UserID: principal.UserID})
	s.observeStage(ctx, stage.NameMeter, time.Since(start), err)
	if err != nil && isCanceled(err) {
		s.fail(w, r, err) // the client gone, or a shutdown
		return
	}
	if err != nil {
		e := apierr.FromStage(err)
		if e.Status >= 500 {
			e = apierr.New(http.StatusInternalServerError, apierr.NameInternal, "retrieving the user information failed").
				WithHint("retry in a moment")
			e.Cause = err
		}
		s.log.Error("user info failed", "requestId", requestID(r.Context()), "err", err)
		writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, UserInfo{
		UserID: acct.UserID,
		Subscription: Subscription{
			PlanName:          acct.Plan.Name,
			CurrentCredits:    acct.CurrentCredits,
			LastReset:         acct.LastReset.UTC().Format(time.RFC3339),
			MonthlyCredits:    acct.Plan.MonthlyCredits,
			HasWatermark:      acct.Plan.Watermark,
			HasDataRetention:  acct.Plan.RetentionDays > 0,
			DataRetentionDays: acct.Plan.RetentionDays,
		},
	})
}

// UserInfo is the body of GET /v1/user/info.
type UserInfo struct {
	UserID       string       `json:"userId"`
	Subscription Subscription `json:"subscription"`
}

// Subscription is the account's plan and balance.
type Subscription struct {
	PlanName          string `json:"planName"`
	CurrentCredits    int64  `json:"currentCredits"`
	LastReset         string `json:"lastReset"`
	MonthlyCredits    int64  `json:"monthlyCredits"`
	HasWatermark      bool   `json:"hasWatermark"`
	HasDataRetention  bool   `json:"hasDataRetention"`
	DataRetentionDays int64  `json:"dataRetentionDays"`
}
