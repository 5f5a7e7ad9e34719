package e2e

import (
	"bytes"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestRoguePluginMetrics: whatever a third-party plugin answers to the
// Metrics call, /metrics answers in time with valid text and the host's
// families intact, the plugin's bad families are left out and the log says
// why once, not on every scrape. Before, a plugin's million series made
// each scrape take ~9 s and 1.7 GB of the host's memory for 61 MB of text,
// an invalid UTF-8 HELP line went out as is (Prometheus then rejects the
// whole scrape), a family named "mdpress.http.requests.total" went out as
// a second mdpress_http_requests_total to scrapers without UTF-8 names
// (Prometheus 2), and every family left out, and which of two plugins' clashing
// families was kept (a map's order, per scrape), went without a word.
func TestRoguePluginMetrics(t *testing.T) {
	dir := rogueDir(t)
	tests := []struct {
		name    string
		modes   string
		plugin  string // whose families are left out
		reason  string
		present []string
		absent  []string
	}{
		{"million series", "render:huge", "render-rogue", "metrics answer over 2 MiB",
			[]string{"rogue_sink_up"}, []string{"rogue_huge", "rogue_render_up"}},
		{"hangs", "render:hang", "render-rogue", "no answer in time",
			[]string{"rogue_sink_up"}, []string{"rogue_render_up"}},
		{"invalid UTF-8", "render:bad-utf8", "render-rogue", "not valid UTF-8",
			[]string{"rogue_sink_up"}, []string{"rogue_utf8", "rogue_render_up"}},
		{"not the text format", "render:garbage", "render-rogue", "not the text format",
			[]string{"rogue_sink_up"}, []string{"rogue_render_up"}},
		{"host families", "render:host-name,render:host-series", "render-rogue",
			"mdpress_http_requests_total: a series name of the host; mdpress_pdf_pages_count: a series name of the host",
			[]string{"rogue_render_up", "rogue_sink_up"}, nil},
		{"UTF-8 name of a host family", "render:dotted-name", "render-rogue",
			"mdpress_http_requests_total: a series name of the host",
			[]string{"rogue_render_up", "rogue_sink_up"}, []string{"mdpress.http.requests.total"}},
		{"another plugin's family", "shared,same-series", "sink-rogue",
			"rogue_same: 1 series already exposed; rogue_shared: typed counter by render-rogue",
			[]string{"rogue_render_up", "rogue_sink_up", `rogue_shared{stage="render"}`, "rogue_same"},
			[]string{`rogue_shared{stage="sink"}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startHost(t, withArgs("--plugin-dir", dir, "--backend", "render-rogue", "--sink", "sink-rogue"),
				withEnv("ROGUE_METRICS="+tc.modes))
			for i := range 3 {
				start := time.Now()
				resp, body := h.do("GET", "/metrics", "", nil, nil)
				took := time.Since(start)
				if resp.StatusCode != 200 {
					t.Fatalf("/metrics: %d", resp.StatusCode)
				}
				// Prometheus's default scrape timeout is 10 s.
				if took > 5*time.Second || len(body) > 1<<20 {
					t.Fatalf("/metrics took %s for %d bytes", took, len(body))
				}
				if !utf8.Valid(body) {
					t.Fatal("/metrics is not valid UTF-8")
				}
				parser := expfmt.NewTextParser(model.UTF8Validation)
				fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
				if err != nil {
					t.Fatalf("/metrics is not the Prometheus text format: %v", err)
				}
				got := map[string]float64{}
				for name, f := range fams {
					for _, m := range f.GetMetric() {
						got[name+labelString(m.GetLabel())] = m.GetGauge().GetValue() + m.GetCounter().GetValue() + m.GetUntyped().GetValue()
					}
				}
				if _, ok := got[`mdpress_http_requests_total{code="200",route="/v1/pdf/markdown"}`]; ok {
					t.Error("a plugin's series is in the host's mdpress_http_requests_total")
				}
				if n := fams["mdpress_pdf_pages"].GetMetric()[0].GetHistogram().GetSampleCount(); n != 0 {
					t.Errorf("mdpress_pdf_pages_count = %d, want 0", n)
				}
				restarts, ok := got[`mdpress_plugin_restarts_total{plugin="render-rogue"}`]
				if !ok || restarts != 0 || got[`mdpress_http_requests_total{code="200",route="/metrics"}`] < float64(i) {
					t.Error("the host's families are not what the host counted")
				}
				for _, want := range tc.present {
					if got[want] != 1 {
						t.Errorf("%s = %v, want 1", want, got[want])
					}
				}
				for _, bad := range tc.absent {
					if _, ok := got[bad]; ok {
						t.Errorf("%s is in /metrics", bad)
					}
				}
			}
			logs := h.logs.String()
			line := `msg="plugin metrics left out of /metrics" plugin=` + tc.plugin
			if n := strings.Count(logs, line); n != 1 {
				t.Fatalf("%d log lines %q over 3 scrapes, want 1:\n%s", n, line, tail(logs, 20))
			}
			if !strings.Contains(logs, tc.reason) {
				t.Errorf("the log does not say %q:\n%s", tc.reason, tail(logs, 20))
			}
		})
	}
}

// TestPluginMetricsHungOrDown: a plugin whose Metrics call hangs costs a
// scrape at most half the timeout Prometheus says it scrapes with, and a
// plugin that is down or relaunching is not "back" in the log before it
// answered. Before, a scrape waited 2 s whatever Prometheus's timeout (with
// scrape_timeout: 1s every scrape failed, the host's families with it), and
// a plugin killed while left out was logged as back.
func TestPluginMetricsHungOrDown(t *testing.T) {
	dir := rogueDir(t)
	h := startHost(t, withArgs("--plugin-dir", dir, "--backend", "render-rogue", "--sink", "sink-rogue"),
		withEnv("ROGUE_METRICS=render:hang"))
	scrape := func() time.Duration {
		start := time.Now()
		resp, body := h.do("GET", "/metrics", "", nil, map[string]string{"X-Prometheus-Scrape-Timeout-Seconds": "1"})
		took := time.Since(start)
		if resp.StatusCode != 200 || !strings.Contains(string(body), "rogue_sink_up 1") {
			t.Fatalf("/metrics: %d %.300s", resp.StatusCode, body)
		}
		return took
	}
	if took := scrape(); took >= time.Second {
		t.Fatalf("/metrics took %s, past the scrape timeout of 1 s", took)
	}
	rogue := h.plugin("render-rogue")
	if err := syscall.Kill(rogue, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		scrape()
	}
	if logs := h.logs.String(); strings.Contains(logs, "plugin metrics back in /metrics") {
		t.Fatalf("a plugin that never answered is logged as back:\n%s", tail(logs, 20))
	}
}
