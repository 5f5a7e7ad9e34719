package metrics

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mdpress/mdpress/sdk/stage"
)

func TestLintAndMerge(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	m.ObserveStage("render", "render-fpdf", 10*time.Millisecond, nil)
	m.ObserveStage("render", "render-fpdf", time.Second, stage.Errorf(stage.CodeTimeout, "slow"))
	m.ObserveStage("parse", "parse-goldmark", time.Millisecond, errors.New("boom"))
	m.ObserveHTTP("/v1/pdf/markdown", 200, time.Second)
	m.PluginRestarted("render-chrome")
	m.Delivered(1, 3, 12345)
	m.ConnectionClosed(ConnSlow)
	m.Connections(4096, 12, 3)

	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}

	src := func(context.Context) []PluginMetrics {
		return []PluginMetrics{
			{Plugin: "render", Text: []byte("# HELP mdpress_chrome_tabs_busy Tabs rendering now.\n# TYPE mdpress_chrome_tabs_busy gauge\nmdpress_chrome_tabs_busy 2\n")},
			{Plugin: "bad", Text: []byte("not { exposition")},
			{Plugin: "clash", Text: []byte("# TYPE mdpress_credits_charged_total counter\nmdpress_credits_charged_total 99\n")},
		}
	}
	rec := httptest.NewRecorder()
	m.Handler(src, slog.New(slog.DiscardHandler)).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`mdpress_stage_duration_seconds_count{outcome="ok",plugin="render-fpdf",stage="render"} 1`,
		`mdpress_stage_duration_seconds_count{outcome="timeout",plugin="render-fpdf",stage="render"} 1`,
		`mdpress_stage_duration_seconds_count{outcome="internal",plugin="parse-goldmark",stage="parse"} 1`,
		`mdpress_http_requests_total{code="200",route="/v1/pdf/markdown"} 1`,
		`mdpress_plugin_restarts_total{plugin="render-chrome"} 1`,
		`mdpress_credits_charged_total 1`,
		`mdpress_http_connections_closed_total{reason="slow"} 1`,
		`mdpress_http_connections_closed_total{reason="refused"} 0`,
		`mdpress_http_connections_open 12`,
		`mdpress_chrome_tabs_busy 2`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The build's labels come from the binary; their presence is what a
	// dashboard joins on.
	if !regexp.MustCompile(`(?m)^mdpress_build_info\{goversion="go[^"]+",revision="[^"]+",version="[^"]+"\} 1$`).Match(body) {
		t.Errorf("/metrics lacks mdpress_build_info:\n%s", body)
	}
	if strings.Contains(string(body), "99") && strings.Contains(string(body), "mdpress_credits_charged_total 99") {
		t.Error("a plugin overrode a host family")
	}
}

// TestRestartsFromZero: every configured plugin has a restart count from
// the start, so the first restart is an increase Prometheus sees.
// TestStageBucketsSubMillisecond: the stage histogram tells a plugin hop
// (~0.15 ms) from a key check (~0.4 ms) and both from a call of 60 s.
func TestStageBucketsSubMillisecond(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	for _, d := range []time.Duration{150 * time.Microsecond, 400 * time.Microsecond, 59 * time.Second} {
		m.ObserveStage("auth", "auth-apikey", d, nil)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[uint64]bool{}
	for _, f := range families {
		if f.GetName() != "mdpress_stage_duration_seconds" {
			continue
		}
		for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
			counts[b.GetCumulativeCount()] = true
		}
	}
	for _, n := range []uint64{1, 2, 3} {
		if !counts[n] {
			t.Errorf("no bucket holds exactly %d of calls of 0.15 ms, 0.4 ms and 59 s: they are not told apart", n)
		}
	}
}

func TestRestartsFromZero(t *testing.T) {
	m := New(prometheus.NewRegistry())
	m.PluginsLaunched("parse-goldmark", "render-fpdf")
	m.PluginRestarted("render-fpdf")
	rec := httptest.NewRecorder()
	m.Handler(nil, slog.New(slog.DiscardHandler)).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		`mdpress_plugin_restarts_total{plugin="parse-goldmark"} 0`,
		`mdpress_plugin_restarts_total{plugin="render-fpdf"} 1`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestPluginLabelsEscaped: label names that a scraper without UTF-8 names
// reads as one ("a.b" and a_b) leave the family out rather than write a
// series with a label twice, which fails the whole scrape.
func TestPluginLabelsEscaped(t *testing.T) {
	m := New(prometheus.NewRegistry())
	src := func(context.Context) []PluginMetrics {
		return []PluginMetrics{{Plugin: "p", Text: []byte("# TYPE x gauge\nx{\"a.b\"=\"1\",a_b=\"2\"} 1\n# TYPE y gauge\ny 1\n")}}
	}
	var logs strings.Builder
	rec := httptest.NewRecorder()
	m.Handler(src, slog.New(slog.NewTextHandler(&logs, nil))).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := parser.TextToMetricFamilies(rec.Body); err != nil {
		t.Fatalf("/metrics is not the text format: %v", err)
	}
	if !strings.Contains(logs.String(), "plugin metrics left out") {
		t.Errorf("no log of the family left out: %s", logs.String())
	}
}

// TestPrometheusNamesReserved: a plugin's up or scrape_* family is left
// out. Prometheus writes those series itself for every scrape, and a
// plugin's "up 0" beside its own would have a live replica read as down.
func TestPrometheusNamesReserved(t *testing.T) {
	m := New(prometheus.NewRegistry())
	src := func(context.Context) []PluginMetrics {
		return []PluginMetrics{{Plugin: "p", Text: []byte("# TYPE up gauge\nup 0\n# TYPE scrape_duration_seconds gauge\nscrape_duration_seconds 99\n# TYPE p_ok gauge\np_ok 1\n")}}
	}
	var logs strings.Builder
	rec := httptest.NewRecorder()
	m.Handler(src, slog.New(slog.NewTextHandler(&logs, nil))).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("/metrics is not the text format: %v", err)
	}
	for _, name := range []string{"up", "scrape_duration_seconds"} {
		if _, ok := fams[name]; ok {
			t.Errorf("/metrics carries the plugin's %s", name)
		}
	}
	if _, ok := fams["p_ok"]; !ok {
		t.Error("the plugin's other family was dropped too")
	}
	if !strings.Contains(logs.String(), "Prometheus") {
		t.Errorf("the log does not say why: %s", logs.String())
	}
}
