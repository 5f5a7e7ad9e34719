package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mdpress/mdpress/host/config"
	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestMetricsAfterConversions: what /metrics says after a few requests
// matches what was served, family by family (DESIGN section 5): credits
// charged, the pages and bytes of the PDFs delivered, requests by route and
// status, their durations and the stage histogram; a refused request is
// counted but charges and delivers nothing.
func TestMetricsAfterConversions(t *testing.T) {
	pdfcheck.Require(t)
	h := startHost(t, fpdf())
	_, key := h.account("pro", 10)

	var pages, size int
	for _, md := range []string{"# One page", threePages()} {
		resp, pdf := h.post(key, map[string]string{"markdown": md})
		if resp.StatusCode != 200 {
			t.Fatalf("conversion: %d %.200s", resp.StatusCode, pdf)
		}
		pages += pdfcheck.Read(t, pdf).Pages
		size += len(pdf)
	}
	if resp, body := h.post(key, map[string]string{"markdown": "x", "theme": "dark"}); resp.StatusCode != 400 {
		t.Fatalf("bad theme: %d %s", resp.StatusCode, body)
	}
	if resp, body := h.post("mdp_nope", map[string]string{"markdown": "x"}); resp.StatusCode != 401 {
		t.Fatalf("bad key: %d %s", resp.StatusCode, body)
	}

	// The charge, and the figures with it, follow the answer: wait for
	// them rather than read them at once.
	want := map[string]float64{
		"mdpress_credits_charged_total": 2,
		"mdpress_pdf_pages_count":       2,
		"mdpress_pdf_pages_sum":         float64(pages),
		"mdpress_pdf_bytes_count":       2,
		"mdpress_pdf_bytes_sum":         float64(size),
		`mdpress_http_requests_total{code="200",route="/v1/pdf/markdown"}`:                       2,
		`mdpress_http_requests_total{code="400",route="/v1/pdf/markdown"}`:                       1,
		`mdpress_http_requests_total{code="401",route="/v1/pdf/markdown"}`:                       1,
		`mdpress_http_request_duration_seconds_count{route="/v1/pdf/markdown"}`:                  4,
		`mdpress_stage_duration_seconds_count{outcome="ok",plugin="render-fpdf",stage="render"}`: 2,
	}
	var got map[string]float64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got = scrape(t, h)
		if got["mdpress_credits_charged_total"] >= 2 || time.Now().After(deadline) {
			break
		}
	}
	for name, v := range want {
		if g, ok := got[name]; !ok || g != v {
			t.Errorf("%s = %v (present: %v), want %v", name, g, ok, v)
		}
	}
}

// metricFamilies reads /metrics as Prometheus does.
func metricFamilies(t *testing.T, h *host) map[string]*dto.MetricFamily {
	t.Helper()
	resp, body := h.do("GET", "/metrics", "", nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	return families
}

// scrape reads /metrics as Prometheus does and flattens it into
// name{label="value",...} -> value, labels in name order, histograms as
// their _count and _sum.
func scrape(t *testing.T, h *host) map[string]float64 {
	t.Helper()
	families := metricFamilies(t, h)
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := labelString(m.GetLabel())
			switch {
			case m.Counter != nil:
				out[name+labels] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[name+labels] = m.GetGauge().GetValue()
			case m.Histogram != nil:
				out[name+"_count"+labels] = float64(m.GetHistogram().GetSampleCount())
				out[name+"_sum"+labels] = m.GetHistogram().GetSampleSum()
			}
		}
	}
	return out
}

func labelString(pairs []*dto.LabelPair) string {
	if len(pairs) == 0 {
		return ""
	}
	var parts []string
	for _, p := range pairs {
		parts = append(parts, fmt.Sprintf("%s=%q", p.GetName(), p.GetValue()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// TestMetricsAdmission: /metrics shows the conversions holding a slot and
// those queued for one, against their bounds, so that a filling queue is
// seen before its 429s begin. With render-fpdf stopped (SIGSTOP), the one
// slot is held and the next requests wait; once it runs again, both fall
// back to 0.
func TestMetricsAdmission(t *testing.T) {
	h := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) {
		c.Server.MaxConcurrent, c.Server.Queue = 1, 5
	}))
	_, key := h.account("pro", 10)
	got := scrape(t, h)
	for name, v := range map[string]float64{"mdpress_conversions_running": 0, "mdpress_conversions_queued": 0,
		"mdpress_conversions_max": 1, "mdpress_conversions_queue_max": 5} {
		if g, ok := got[name]; !ok || g != v {
			t.Errorf("idle: %s = %v (present: %v), want %v", name, g, ok, v)
		}
	}

	render := h.plugin("render-fpdf")
	if err := syscall.Kill(render, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(render, syscall.SIGCONT)
	const clients = 3
	statuses := make(chan int, clients)
	for i := range clients {
		go func() {
			resp, _ := h.post(key, map[string]string{"markdown": fmt.Sprintf("# Waiting %d", i)})
			statuses <- resp.StatusCode
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got = scrape(t, h)
		if got["mdpress_conversions_running"] == 1 && got["mdpress_conversions_queued"] == clients-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with the renderer stopped: running %v, queued %v; want 1 and %d",
				got["mdpress_conversions_running"], got["mdpress_conversions_queued"], clients-1)
		}
	}
	if err := syscall.Kill(render, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for range clients {
		if s := <-statuses; s != 200 {
			t.Errorf("conversion: %d", s)
		}
	}
	got = scrape(t, h)
	if got["mdpress_conversions_running"] != 0 || got["mdpress_conversions_queued"] != 0 {
		t.Errorf("after: running %v, queued %v; want 0 and 0", got["mdpress_conversions_running"], got["mdpress_conversions_queued"])
	}
}
