// Package api serves the public HTTP contract on gorilla/mux: conversions,
// account info, hosted files, health, readiness, metrics and the OpenAPI
// documents. Handlers turn every failure into the contract's error body;
// internals go to the log with the request id, never to the client.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/mdpress/mdpress/core/apierr"
	"github.com/mdpress/mdpress/core/pipeline"
	"github.com/mdpress/mdpress/host/metrics"
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
)

// Stages gives handlers the live plugin clients; the supervisor implements it.
type Stages interface {
	Client(ctx context.Context, stageName string) (*sdkplugin.Client, error)
	Plugin(stageName string) string
	// Capabilities are what the stage's plugin declared in Configure.
	Capabilities(stageName string) []string
	Ready() error
}

// TypicalBodyBytes is the body the default held-body bound makes room for
// in every conversion slot and queue place: four times the largest
// document of the project's corpus. Larger bodies share the bound, so the
// queue holds fewer of them: memory comes before queue length.
const TypicalBodyBytes = 512 << 10

// Options are the limits and settings the handlers enforce.
type Options struct {
	PublicURL    string
	MaxBodyBytes int64
	// MaxHeldBodyBytes bounds the request bodies held at once, from the
	// first byte read until the response, and the PDFs being written out
	// with them; past it the API answers 429.
	// Default: two full-size bodies per conversion slot, or a
	// TypicalBodyBytes body for every slot and queue place if that is more
	// (the host peaks at about five times this while they are read and
	// decoded).
	MaxHeldBodyBytes int64
	MaxHostedBytes   int64
	RequestTimeout   time.Duration
	// The stage timeouts bound one call of their stage within the request
	// (auth.timeout, meter.timeout, ...); 0: no bound of their own, but
	// DefaultAuthTimeout for the key check and the 10 s of a conversion's
	// meter calls (see pipeline.Stages).
	AuthTimeout, MeterTimeout, ParseTimeout, StyleTimeout, RenderTimeout, SinkTimeout time.Duration
	// MaxConcurrent conversions run at once; up to Queue more wait for a
	// slot, and past that the API answers 429.
	MaxConcurrent int
	// MaxConcurrentPerKey conversions of one API key run at once; its
	// others wait, in the queue, for one of its own to end. Default: one
	// fewer than the CPU cores, at least 1. A render can hold a Chromium
	// tab for the whole render timeout with a few bytes of CSS, and a
	// failed render is refunded: without this bound one key sending as
	// many such documents as there are tabs (one per core by default)
	// kept every other account's conversions waiting, and timing out,
	// for as long as it kept sending them, at no cost.
	MaxConcurrentPerKey int
	Queue               int
	// MaxDownloads hosted files stream at once (8 per client address);
	// past it the download is answered 429. Default 64.
	MaxDownloads int
	// TrustedProxies are the reverse proxies and load balancers whose
	// X-Forwarded-For names the client, for the per-address bounds.
	TrustedProxies       []netip.Prefix
	CreditsPerConversion int64
	WatermarkText        string
	MinTTL               time.Duration // hosted files live at least this long
	ReplayTTL            time.Duration // binary results kept for Idempotency-Key replays
	// MetricsSource yields plugins' own metrics; nil for none.
	MetricsSource metrics.PluginSource
	// Dashboard serves the web UI at /; nil for none.
	Dashboard http.Handler
	// Signup creates a free account with a key for the dashboard; nil
	// disables sign-up. SignupsPerHour bounds it per client address.
	Signup         func(ctx context.Context) (userID, apiKey string, err error)
	SignupsPerHour int
}

// Server is the HTTP front of the pipeline.
type Server struct {
	opt       Options
	log       *slog.Logger
	stages    Stages
	metrics   *metrics.Metrics
	pipe      *pipeline.Pipeline
	limiter   *limiter
	recent    *recentKeys
	admit     *admission
	bodies    *bodies
	downloads *downloads
	charges   *recharges
	router    *mux.Router
}

// New builds the router.
func New(opt Options, log *slog.Logger, stages Stages, m *metrics.Metrics) *Server {
	if opt.ReplayTTL == 0 {
		opt.ReplayTTL = 24 * time.Hour
	}
	if opt.MinTTL == 0 {
		opt.MinTTL = 7 * 24 * time.Hour
	}
	if opt.MaxConcurrent <= 0 {
		opt.MaxConcurrent = 2 * runtime.NumCPU()
	}
	if opt.AuthTimeout <= 0 {
		// A key check is one indexed read: one that takes longer is a
		// database that hangs, and it would hold its conversion slot for
		// the whole request timeout.
		opt.AuthTimeout = DefaultAuthTimeout
	}
	if opt.MeterTimeout <= 0 {
		// The pipeline bounds a conversion's meter calls so; the account
		// read of /v1/user/info needs the same bound.
		opt.MeterTimeout = DefaultMeterTimeout
	}
	if opt.MaxConcurrentPerKey <= 0 {
		opt.MaxConcurrentPerKey = max(1, runtime.NumCPU()-1)
	}
	if opt.MaxDownloads <= 0 {
		opt.MaxDownloads = 64
	}
	if opt.Queue <= 0 {
		opt.Queue = 128
	}
	if opt.MaxHeldBodyBytes <= 0 {
		opt.MaxHeldBodyBytes = max(2*int64(opt.MaxConcurrent)*opt.MaxBodyBytes,
			int64(opt.MaxConcurrent+opt.Queue)*TypicalBodyBytes)
	}
	opt.MaxHeldBodyBytes = max(opt.MaxHeldBodyBytes, opt.MaxBodyBytes)
	s := &Server{opt: opt, log: log, stages: stages, metrics: m, limiter: newLimiter(time.Now),
		admit: newAdmission(opt.MaxConcurrent, opt.MaxConcurrentPerKey, opt.Queue), bodies: &bodies{max: opt.MaxHeldBodyBytes},
		downloads: newDownloads(opt.MaxDownloads), charges: newRecharges(log),
		recent: newRecentKeys(time.Now)}
	m.Admission(func() int { return len(s.admit.slots) }, s.admit.queued, opt.MaxConcurrent, opt.Queue)
	s.pipe = pipeline.New(s.observeStage)
	r := mux.NewRouter()
	// mux would answer an unclean path with a 301 to its cleaned form,
	// decoding %2f on the way: /v1/files/..%2f..%2fetc%2fpasswd became a
	// redirect to /etc/passwd. An id that is not one is a 404, like any
	// other unknown path.
	r.SkipClean(true)
	// mux runs its middleware on matched routes only: wrapped here, the
	// misses are counted and get a request id too.
	r.NotFoundHandler = s.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, notFound())
	}))
	var paths []routePath // filled once every route is in
	r.MethodNotAllowedHandler = s.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// mux matched the path but no method, and says neither which route
		// nor which methods: the answer names the methods (RFC 9110 asks
		// for Allow on a 405) and the metrics the route.
		var allow []string
		for _, p := range paths {
			if p.re.MatchString(r.URL.Path) {
				allow = p.methods
				if rec, ok := w.(*statusRecorder); ok {
					rec.route = p.template
				}
				break
			}
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, apierr.New(http.StatusMethodNotAllowed, apierr.NameMethodNotAllowed, "method not allowed on this endpoint").
			WithDetails(map[string]any{"method": r.Method, "allowed": allow}))
	}))
	r.Use(s.observe)
	// Full paths rather than a /v1 subrouter: in gorilla/mux v1.8 a
	// subrouter's routes inherit its prefix matcher, which clears the
	// method mismatch of a sibling route, so a wrong method was a 404.
	r.HandleFunc(convertPath, s.convert).Methods(http.MethodPost)
	r.HandleFunc("/v1/user/info", s.userInfo).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/v1/files/{id}", s.file).Methods(http.MethodGet, http.MethodHead)
	// Probes and scrapers may use HEAD (load balancers do).
	r.HandleFunc("/v1/openapi.json", serveJSON(openAPIFull)).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/v1/openapi-action.json", serveJSON(mustJSON(actionDoc(openAPIDoc(), opt.PublicURL)))).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/readyz", s.ready).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/metrics", m.Handler(opt.MetricsSource, log)).Methods(http.MethodGet, http.MethodHead)
	if opt.Signup != nil {
		r.HandleFunc("/dashboard/signup", s.signup).Methods(http.MethodPost)
	}
	if opt.Dashboard != nil {
		// One matcher only: a matching path matcher would clear the method
		// mismatch an API route recorded, turning its 405 into a 404.
		r.MatcherFunc(dashboardRequest).Handler(dashboardNotFoundJSON(opt.Dashboard)).Name(dashboardRoute)
	}
	paths = routePaths(r)
	s.router = r
	return s
}

// routePath is a route's path with the methods it answers.
type routePath struct {
	template string
	re       *regexp.Regexp
	methods  []string
}

func routePaths(r *mux.Router) []routePath {
	var out []routePath
	_ = r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil // the dashboard's matcher: no path, no 405s
		}
		expr, err := route.GetPathRegexp()
		if err != nil {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil {
			return nil
		}
		out = append(out, routePath{template: tpl, re: regexp.MustCompile(expr), methods: methods})
		return nil
	})
	return out
}

// DefaultAuthTimeout and DefaultMeterTimeout bound a key check and a
// meter call when the config sets no timeout: each is one indexed read or
// one small write, and one that takes longer is a database that hangs.
const (
	DefaultAuthTimeout  = 10 * time.Second
	DefaultMeterTimeout = 10 * time.Second
)

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if err := s.stages.Ready(); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": "a processing stage is not ready"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// client returns a stage's client or an API error.
func (s *Server) client(ctx context.Context, stageName string) (*sdkplugin.Client, error) {
	c, err := s.stages.Client(ctx, stageName)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, e *apierr.Error) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", itoa(e.RetryAfter))
	}
	writeJSON(w, e.Status, e.Body)
}

// fail logs the internal cause and writes the safe body. A request the
// server cut at shutdown is told so, wherever it was waiting.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	converting := r.URL.Path == convertPath
	cause := context.Cause(r.Context())
	if isCanceled(err) && errors.Is(cause, ErrShuttingDown) {
		err = cause
		if !converting {
			err = shuttingDown("the server is shutting down")
		}
	} else if isCanceled(err) && r.Context().Err() != nil {
		// The client went away (while its request waited for a slot, say):
		// no server error. As a 500 at ERROR, every client that gave up in
		// a full queue wrote an error line and raised the 5xx ratio that
		// the alerts watch.
		s.log.Info("client went away", "requestId", requestID(r.Context()), "err", err)
		w.WriteHeader(StatusClientClosed)
		return
	}
	e := apierr.FromStage(err)
	if !converting {
		e = apierr.FromStageElsewhere(err)
	}
	lvl := slog.LevelInfo
	if e.Status >= 500 {
		lvl = slog.LevelError
	}
	s.log.Log(r.Context(), lvl, "request failed", "requestId", requestID(r.Context()),
		"status", e.Status, "error", e.Body.Message, "err", err)
	writeError(w, e)
}

func isCanceled(err error) bool { return errors.Is(err, context.Canceled) }

// StatusClientClosed is what a request whose client went away before its
// answer counts as in mdpress_http_requests_total (nginx's 499); the
// client, gone, sees nothing.
const StatusClientClosed = 499

// convertPath is the conversion's route: its failures tell the client it
// was not charged, which others do not speak of.
const convertPath = "/v1/pdf/markdown"

// ErrShuttingDown is the cause with which a server that is shutting down
// cancels the requests it gave up waiting for (see http.Server.BaseContext):
// their clients are told so, and that they were not charged.
var ErrShuttingDown error = shuttingDown("the server is shutting down; no credit was charged")

func shuttingDown(text string) *apierr.Error {
	e := apierr.New(http.StatusServiceUnavailable, apierr.NameUnavailable, text).
		WithHint("send the request again")
	e.RetryAfter = 1
	return e
}
