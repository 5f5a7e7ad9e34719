package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mdpress/mdpress/sdk/stage"
)

// PluginMetrics is one plugin's answer to the Metrics call.
type PluginMetrics struct {
	Plugin string // the plugin's name, for the log
	Text   []byte // its families in the text format
	Err    error  // why there is no answer
}

// PluginSource asks every live plugin for its families, in a fixed order:
// where two plugins expose the same series, the first keeps it.
type PluginSource func(ctx context.Context) []PluginMetrics

// PluginTimeout bounds the Metrics calls of a scrape, well inside
// Prometheus's default scrape timeout of 10 s: a plugin that hangs loses its
// families, not the host its scrape.
const PluginTimeout = 2 * time.Second

// maxPluginLines bounds the lines of one plugin's answer, which the host
// parses on every scrape: within MaxMetricsBytes, short lines are still
// ~200,000 series, a fifth of the million that took a scrape ~9 s.
const maxPluginLines = 20000

// pluginGatherer gathers the plugins' families, keeping only what cannot
// break the scrape: a valid UTF-8 answer in the text format, families whose
// series names are neither the host's nor an earlier plugin's, and series
// that are not already there. Prometheus rejects a whole scrape for one
// invalid line, and client_golang leaves out a clashing family without a
// word; so a plugin's answer is checked here and what is left out is logged,
// once, not on every scrape.
type pluginGatherer struct {
	src  PluginSource
	host prometheus.Gatherer
	log  *slog.Logger

	mu      sync.Mutex
	dropped map[string]string // plugin -> why, as last logged
}

func (g *pluginGatherer) gather(ctx context.Context) ([]*dto.MetricFamily, error) {
	hostFams, _ := g.host.Gather()
	taken := map[string]string{}
	for _, f := range hostFams {
		for _, n := range seriesNames(f) {
			taken[n] = "the host"
		}
	}
	merged := map[string]*dto.MetricFamily{}
	seen := map[string]bool{} // series already merged, by name and labels
	why := map[string]string{}
	asked := map[string]bool{}
	for _, a := range g.src(ctx) {
		asked[a.Plugin] = true
		fams, err := parsePlugin(a)
		if err != nil {
			why[a.Plugin] = err.Error()
			continue
		}
		var problems []string
		for _, name := range sortedNames(fams) {
			f := fams[name]
			have := merged[name]
			if have == nil {
				if owner, ok := clash(f, taken); ok {
					problems = append(problems, fmt.Sprintf("%s: a series name of %s", name, owner))
					continue
				}
			}
			if have != nil && have.GetType() != f.GetType() {
				problems = append(problems, fmt.Sprintf("%s: typed %s by %s", name, strings.ToLower(have.GetType().String()), taken[name]))
				continue
			}
			var dup int
			var keep []*dto.Metric
			for _, m := range f.Metric {
				if k := seriesKey(name, m); seen[k] {
					dup++
				} else {
					seen[k] = true
					keep = append(keep, m)
				}
			}
			if dup > 0 {
				problems = append(problems, fmt.Sprintf("%s: %d series already exposed", name, dup))
			}
			if have != nil {
				have.Metric = append(have.Metric, keep...)
				continue
			}
			f.Metric = keep
			merged[name] = f
			for _, n := range seriesNames(f) {
				taken[n] = a.Plugin
			}
		}
		if len(problems) > 0 {
			if len(problems) > 5 {
				problems = append(problems[:5], fmt.Sprintf("and %d more", len(problems)-5))
			}
			why[a.Plugin] = "families left out: " + strings.Join(problems, "; ")
		}
	}
	g.report(asked, why)
	out := make([]*dto.MetricFamily, 0, len(merged))
	for _, f := range merged {
		if len(f.Metric) > 0 {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out, nil
}

// parsePlugin reads one plugin's answer as Prometheus would.
func parsePlugin(a PluginMetrics) (map[string]*dto.MetricFamily, error) {
	switch {
	case errors.Is(a.Err, context.DeadlineExceeded) || stage.CodeOf(a.Err) == stage.CodeTimeout:
		return nil, fmt.Errorf("no answer in time (%s, or half the scrape timeout)", PluginTimeout)
	case a.Err != nil:
		return nil, a.Err
	case !utf8.Valid(a.Text):
		return nil, errors.New("answer is not valid UTF-8")
	case bytes.Count(a.Text, []byte("\n")) > maxPluginLines:
		return nil, fmt.Errorf("answer over %d lines", maxPluginLines)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(a.Text))
	if err != nil {
		return nil, fmt.Errorf("not the text format: %w", err)
	}
	// The checks client_golang runs on a registry, which the text parser
	// does not: series twice, "le" on a histogram's series, ...
	valid, err := prometheus.Gatherers{prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		out := make([]*dto.MetricFamily, 0, len(fams))
		for _, f := range fams {
			// A scraper without UTF-8 names (Prometheus 2, text 0.0.4)
			// reads "mdpress.http.requests.total" escaped, as the host's
			// family: a second TYPE line that fails the whole scrape, and
			// the plugin's value ahead of the host's. Escaped here, the
			// name is checked as every scraper will read it.
			out = append(out, model.EscapeMetricFamily(f, model.UnderscoreEscaping))
		}
		return out, nil
	})}.Gather()
	if err != nil {
		return nil, fmt.Errorf("not valid: %w", err)
	}
	kept := make(map[string]*dto.MetricFamily, len(valid))
	for _, f := range valid {
		kept[f.GetName()] = f
	}
	return kept, nil
}

// report logs a plugin's families left out when the reason is new, and
// when they are back. A plugin that was not asked (down, relaunching) keeps
// its state: it is not back until it answers.
func (g *pluginGatherer) report(asked map[string]bool, why map[string]string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for p, reason := range why {
		if g.dropped[p] != reason {
			g.log.Warn("plugin metrics left out of /metrics", "plugin", p, "reason", reason)
		}
	}
	for p, reason := range g.dropped {
		if _, still := why[p]; still {
			continue
		}
		if asked[p] {
			g.log.Info("plugin metrics back in /metrics", "plugin", p)
		} else {
			why[p] = reason
		}
	}
	g.dropped = why
}

// seriesNames are the names the text format writes a family's samples
// under, its own included, which a family of another type must not take.
func seriesNames(f *dto.MetricFamily) []string {
	n := f.GetName()
	switch f.GetType() {
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		return []string{n, n + "_bucket", n + "_sum", n + "_count"}
	case dto.MetricType_SUMMARY:
		return []string{n, n + "_sum", n + "_count"}
	}
	return []string{n}
}

// clash says whose series name f would write.
func clash(f *dto.MetricFamily, taken map[string]string) (string, bool) {
	for _, n := range seriesNames(f) {
		if owner, ok := taken[n]; ok {
			return owner, true
		}
		// Prometheus writes these for every scrape; a plugin's "up 0"
		// beside them would have a live replica read as down.
		if n == "up" || strings.HasPrefix(n, "scrape_") {
			return "Prometheus's own per-scrape series", true
		}
	}
	return "", false
}

func seriesKey(name string, m *dto.Metric) string {
	var b strings.Builder
	b.WriteString(name)
	labels := slices.Clone(m.GetLabel())
	sort.Slice(labels, func(i, j int) bool { return labels[i].GetName() < labels[j].GetName() })
	for _, l := range labels {
		b.WriteString("\xff" + l.GetName() + "\xff" + l.GetValue())
	}
	return b.String()
}

func sortedNames(fams map[string]*dto.MetricFamily) []string {
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
