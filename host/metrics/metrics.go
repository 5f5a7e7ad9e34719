// Package metrics holds the host's Prometheus registry: stage latencies
// recorded around every plugin call (so third-party plugins are measured the
// same way), HTTP traffic by route template, plugin restarts, credits and PDF
// sizes, plus the plugins' own families gathered over gRPC.
package metrics

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/mdpress/mdpress/host/version"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Metrics are the host's collectors.
type Metrics struct {
	reg            *prometheus.Registry
	stageDuration  *prometheus.HistogramVec
	httpRequests   *prometheus.CounterVec
	httpDuration   *prometheus.HistogramVec
	pluginRestarts *prometheus.CounterVec
	creditsCharged prometheus.Counter
	undelivered    *prometheus.CounterVec
	pdfPages       prometheus.Histogram
	pdfBytes       prometheus.Histogram
	connsClosed    *prometheus.CounterVec
	connsOpen      prometheus.Gauge
	connsSending   prometheus.Gauge
	connsMax       prometheus.Gauge
}

// New registers the host's families on reg.
func New(reg *prometheus.Registry) *Metrics {
	m := &Metrics{
		reg: reg,
		// Buckets from 0.1 ms: a plugin hop takes 0.15-0.2 ms and a key
		// check or a reused style 0.3-0.5 ms on an idle machine, all of
		// which fell in one first bucket of 0.5 ms, so their median could
		// not be read.
		stageDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mdpress_stage_duration_seconds",
			Help:    "Time spent in one plugin call, by stage, plugin and outcome (ok or an error kind).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"stage", "plugin", "outcome"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mdpress_http_requests_total",
			Help: "HTTP requests by route template and status code.",
		}, []string{"route", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mdpress_http_request_duration_seconds",
			Help:    "HTTP request latency by route template.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"route"}),
		pluginRestarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mdpress_plugin_restarts_total",
			Help: "Relaunches of plugin processes begun after they exited or failed health checks, those that then failed to start included.",
		}, []string{"plugin"}),
		creditsCharged: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mdpress_credits_charged_total",
			Help: "Credits committed for delivered PDFs.",
		}),
		undelivered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mdpress_pdf_undelivered_total",
			Help: "Binary answers whose PDF was not written out in full (the client gone, a shutdown), by what became of their credits: refunded, charged (before the cut), held (the refund failed; released when the reservation expires) or none (a replay).",
		}, []string{"credits"}),
		pdfPages: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "mdpress_pdf_pages",
			Help:    "Pages per produced PDF.",
			Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000},
		}),
		pdfBytes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "mdpress_pdf_bytes",
			Help:    "Size of produced PDFs in bytes.",
			Buckets: prometheus.ExponentialBuckets(4096, 4, 10),
		}),
		connsClosed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mdpress_http_connections_closed_total",
			Help: "Client connections closed at server.maxConnections, by reason: idle (the one idle longest, for a new one), over_share (sending on longest from an address past server.maxSendingPerAddress), slow (a request coming at under 1 KiB/s), refused (a new one answered 503) or dropped (a new one closed unanswered, with 64 being refused already).",
		}, []string{"reason"}),
		connsOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mdpress_http_connections_open",
			Help: "Client connections open, counted against server.maxConnections.",
		}),
		connsSending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mdpress_http_connections_sending",
			Help: "Open client connections still sending their request (headers or body).",
		}),
		connsMax: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mdpress_http_connections_max",
			Help: "The bound of open client connections (server.maxConnections, lowered to fit the open-file limit).",
		}),
	}
	// The build, as a constant 1 whose labels say what runs: a dashboard
	// joins on it to mark deploys, and a bug report's scrape names its code.
	info := version.Get()
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "mdpress_build_info",
		Help:        "Always 1; its labels name the running build: version, Git commit (revision, \"+dirty\" for a modified tree) and Go version.",
		ConstLabels: prometheus.Labels{"version": info.Version, "revision": info.Short(), "goversion": info.Go},
	})
	build.Set(1)
	reg.MustRegister(build)
	reg.MustRegister(m.stageDuration, m.httpRequests, m.httpDuration, m.pluginRestarts,
		m.creditsCharged, m.undelivered, m.pdfPages, m.pdfBytes,
		m.connsClosed, m.connsOpen, m.connsSending, m.connsMax,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Present from the start, so that increase() sees the first one.
	for _, c := range []string{UndeliveredRefunded, UndeliveredCharged, UndeliveredHeld, UndeliveredNone} {
		m.undelivered.WithLabelValues(c)
	}
	for _, r := range []string{ConnIdle, ConnOverShare, ConnSlow, ConnRefused, ConnDropped} {
		m.connsClosed.WithLabelValues(r)
	}
	return m
}

// Why a connection was closed at the bound of open connections.
const (
	ConnIdle      = "idle"
	ConnOverShare = "over_share"
	ConnSlow      = "slow"
	ConnRefused   = "refused"
	ConnDropped   = "dropped"
)

// ConnectionClosed counts a connection closed at the bound, by reason (one
// of the Conn constants).
func (m *Metrics) ConnectionClosed(reason string) { m.connsClosed.WithLabelValues(reason).Inc() }

// Connections records the bound of open connections and how many are open
// and still sending their request.
func (m *Metrics) Connections(max, open, sending int) {
	m.connsMax.Set(float64(max))
	m.connsOpen.Set(float64(open))
	m.connsSending.Set(float64(sending))
}

// Admission exposes the conversions holding a slot and those waiting in
// the queue for one, read at each scrape, beside their bounds
// (server.maxConcurrent, server.queue): the queue fills before its 429s
// begin, which mdpress_http_requests_total alone does not show, nor tell
// from a plan's rate limit.
func (m *Metrics) Admission(running, queued func() int, maxRunning, maxQueued int) {
	gauge := func(name, help string, v func() int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(v()) })
	}
	m.reg.MustRegister(
		gauge("mdpress_conversions_running", "Conversions holding one of the server.maxConcurrent slots.", running),
		gauge("mdpress_conversions_queued", "Conversions waiting for a slot (theirs or their API key's), in the server.queue places.", queued),
		gauge("mdpress_conversions_max", "The bound of conversions at once (server.maxConcurrent).", func() int { return maxRunning }),
		gauge("mdpress_conversions_queue_max", "The places for conversions waiting for a slot (server.queue); past them, 429.", func() int { return maxQueued }))
}

// What became of the credits of an answer not delivered in full.
const (
	UndeliveredRefunded = "refunded"
	UndeliveredCharged  = "charged"
	UndeliveredHeld     = "held"
	UndeliveredNone     = "none"
)

// Undelivered counts an answer not written out in full, by what became of
// its credits (one of the Undelivered constants).
func (m *Metrics) Undelivered(credits string) { m.undelivered.WithLabelValues(credits).Inc() }

// ObserveStage records one plugin call.
func (m *Metrics) ObserveStage(stageName, plugin string, d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = stage.CodeOf(err).String()
	}
	m.stageDuration.WithLabelValues(stageName, plugin, outcome).Observe(d.Seconds())
}

// ObserveHTTP records one request by its route template.
func (m *Metrics) ObserveHTTP(route string, code int, d time.Duration) {
	m.httpRequests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.httpDuration.WithLabelValues(route).Observe(d.Seconds())
}

// PluginsLaunched starts each plugin's restart count at 0. A series born at
// a plugin's first restart was missing from /metrics until then, and the
// first restart was lost to increase() and rate(), which need a sample
// before it: the restart alert of deploy/prometheus/rules.yaml fired a
// restart late.
func (m *Metrics) PluginsLaunched(plugins ...string) {
	for _, p := range plugins {
		m.pluginRestarts.WithLabelValues(p)
	}
}

// PluginRestarted counts a relaunch attempt.
func (m *Metrics) PluginRestarted(plugin string) { m.pluginRestarts.WithLabelValues(plugin).Inc() }

// Delivered records a delivered PDF and its charge.
func (m *Metrics) Delivered(credits int64, pages int, size int) {
	m.creditsCharged.Add(float64(credits))
	m.pdfPages.Observe(float64(pages))
	m.pdfBytes.Observe(float64(size))
}

// Handler serves the registry merged with the plugins' families (see
// pluginGatherer); log says once why a plugin's family is left out.
func (m *Metrics) Handler(src PluginSource, log *slog.Logger) http.Handler {
	opts := promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}
	if src == nil {
		return promhttp.HandlerFor(m.reg, opts)
	}
	g := &pluginGatherer{src: src, host: m.reg, log: log, dropped: map[string]string{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), pluginBudget(r))
		defer cancel()
		plugins := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return g.gather(ctx) })
		promhttp.HandlerFor(prometheus.Gatherers{m.reg, plugins}, opts).ServeHTTP(w, r)
	})
}

// pluginBudget is how long a scrape waits for the plugins: PluginTimeout,
// or half the timeout Prometheus says it scrapes with when that is shorter,
// so that a plugin that hangs costs its own families and not the host's
// scrape (with scrape_timeout: 1s, each scrape failed while a plugin hung).
func pluginBudget(r *http.Request) time.Duration {
	s, err := strconv.ParseFloat(r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds"), 64)
	if err != nil || s <= 0 || math.IsNaN(s) {
		return PluginTimeout
	}
	return min(PluginTimeout, time.Duration(s*float64(time.Second)/2))
}
