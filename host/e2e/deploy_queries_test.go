package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mdpress/mdpress/sdk/stage"
)

var deployDir = filepath.Join("..", "..", "deploy")

// deployQuery is one PromQL expression of deploy/prometheus or
// deploy/grafana, with where it comes from.
type deployQuery struct{ where, expr string }

// TestDeployQueriesMatchMetrics: every query that deploy/prometheus/rules.yaml
// and deploy/grafana/mdpress.json run names families, labels and label
// values that a real server's /metrics exports after conversions (binary
// and hosted, the download of the hosted file), a 400 and a 401: a renamed
// family, label, route template or stage outcome leaves an alert that never
// fires and a panel that stays empty, which nothing else would notice.
// The job the rules watch is the one deploy/prometheus/prometheus.yaml
// scrapes, and the Grafana heatmaps of histograms ask for Prometheus's
// heatmap format (without it each cumulative bucket is drawn as a row).
func TestDeployQueriesMatchMetrics(t *testing.T) {
	h := startHost(t, fpdf())
	_, key := h.account("pro", 10)
	if resp, body := h.post(key, map[string]string{"markdown": "# One"}); resp.StatusCode != 200 {
		t.Fatalf("conversion: %d %.200s", resp.StatusCode, body)
	}
	resp, body := h.post(key, map[string]string{"markdown": "# Two", "output": "url"})
	var hosted struct{ URL string }
	if resp.StatusCode != 200 || json.Unmarshal(body, &hosted) != nil {
		t.Fatalf("output=url: %d %.200s", resp.StatusCode, body)
	}
	dl, err := http.Get(hosted.URL)
	if err != nil || dl.StatusCode != 200 {
		t.Fatalf("download %s: %v %v", hosted.URL, dl, err)
	}
	dl.Body.Close()
	if resp, body := h.post(key, map[string]string{"markdown": ""}); resp.StatusCode != 400 {
		t.Fatalf("empty markdown: %d %s", resp.StatusCode, body)
	}
	if resp, body := h.post("mdp_nope", map[string]string{"markdown": "x"}); resp.StatusCode != 401 {
		t.Fatalf("bad key: %d %s", resp.StatusCode, body)
	}
	h.do("GET", "/readyz", "", nil, nil)

	// family -> label -> values seen; histograms also under their series names.
	var labels map[string]map[string]map[string]bool
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		labels = exportedLabels(t, h)
		if _, ok := labels["mdpress_credits_charged_total"]; ok || time.Now().After(deadline) {
			break
		}
	}
	outcomes := map[string]bool{"ok": true}
	for c := stage.Code(0); !strings.HasPrefix(c.String(), "code("); c++ {
		outcomes[c.String()] = true
	}

	queries, records, jobs := deployQueries(t)
	selector := regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{([^}]*)\})?`)
	matcher := regexp.MustCompile(`([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*"([^"]*)"`)
	grouping := regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
	for _, q := range queries {
		var used []map[string]map[string]bool // the label sets of the families q reads
		for _, m := range selector.FindAllStringSubmatch(q.expr, -1) {
			name, sel := m[1], m[2]
			switch {
			case name == "up":
				for _, mm := range matcher.FindAllStringSubmatch(sel, -1) {
					if mm[1] == "job" && !jobs[mm[3]] {
						t.Errorf("%s: up{job=%q}: deploy/prometheus/prometheus.yaml scrapes no such job (it has %v)", q.where, mm[3], keys(jobs))
					}
				}
				continue
			case strings.Contains(name, ":"):
				if !records[name] {
					t.Errorf("%s: %s is not a recording rule of rules.yaml", q.where, name)
				}
				continue
			case !strings.HasPrefix(name, "mdpress_"):
				continue // a function, keyword or label name
			}
			fam, ok := labels[name]
			if !ok {
				t.Errorf("%s: %s is not in /metrics", q.where, name)
				continue
			}
			used = append(used, fam)
			for _, mm := range matcher.FindAllStringSubmatch(sel, -1) {
				label, op, value := mm[1], mm[2], mm[3]
				seen, ok := fam[label]
				if !ok {
					t.Errorf("%s: %s has no label %q", q.where, name, label)
					continue
				}
				checkLabelValue(t, q.where, label, op, value, seen, outcomes)
			}
		}
		for _, g := range grouping.FindAllStringSubmatch(q.expr, -1) {
			for l := range strings.SplitSeq(g[1], ",") {
				l = strings.TrimSpace(l)
				if l == "" || l == "instance" || l == "job" {
					continue
				}
				if !slices.ContainsFunc(used, func(f map[string]map[string]bool) bool { _, ok := f[l]; return ok }) {
					t.Errorf("%s: grouping by %q, which no family it reads has", q.where, l)
				}
			}
		}
	}
}

// checkLabelValue checks a matcher's value against what the server
// exports: routes seen, stage outcomes (every alternative of a regex),
// status codes as numbers.
func checkLabelValue(t *testing.T, where, label, op, value string, seen, outcomes map[string]bool) {
	t.Helper()
	regex := op == "=~" || op == "!~"
	switch label {
	case "route", "stage":
		if !regex && !seen[value] {
			t.Errorf("%s: %s%s%q: /metrics has %v", where, label, op, value, keys(seen))
		}
		if regex {
			re := regexp.MustCompile("^(?:" + value + ")$")
			if !slices.ContainsFunc(keys(seen), re.MatchString) {
				t.Errorf("%s: %s%s%q matches none of %v", where, label, op, value, keys(seen))
			}
		}
	case "outcome":
		alts := []string{value}
		if regex {
			alts = strings.Split(value, "|")
		}
		for _, a := range alts {
			if !outcomes[a] {
				t.Errorf("%s: outcome %q is not a stage outcome (%v)", where, a, keys(outcomes))
			}
		}
	case "code":
		pattern := `^[1-5][0-9][0-9]$`
		if regex {
			pattern = `^[1-5][0-9.][0-9.]$`
		}
		if !regexp.MustCompile(pattern).MatchString(value) {
			t.Errorf("%s: code%s%q is not an HTTP status", where, op, value)
		}
	}
}

// deployQueries reads the expressions of the rules and the dashboard, the
// names the rules record, and the jobs the scrape config defines.
func deployQueries(t *testing.T) (queries []deployQuery, records, jobs map[string]bool) {
	t.Helper()
	var rules struct {
		Groups []struct {
			Rules []struct{ Record, Alert, Expr string }
		}
	}
	readYAML(t, filepath.Join(deployDir, "prometheus", "rules.yaml"), &rules)
	records = map[string]bool{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			queries = append(queries, deployQuery{"rules.yaml " + r.Record + r.Alert, r.Expr})
			if r.Record != "" {
				records[r.Record] = true
			}
		}
	}
	var scrape struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName string `yaml:"job_name"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, filepath.Join(deployDir, "prometheus", "prometheus.yaml"), &scrape)
	jobs = map[string]bool{}
	for _, s := range scrape.ScrapeConfigs {
		jobs[s.JobName] = true
	}
	if !slices.Contains(scrape.RuleFiles, "rules.yaml") {
		t.Errorf("prometheus.yaml: rule_files %v leaves out rules.yaml", scrape.RuleFiles)
	}

	raw, err := os.ReadFile(filepath.Join(deployDir, "grafana", "mdpress.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Templating struct {
			List []struct{ Name, Type, Query string }
		}
		Panels []struct {
			Type, Title string
			Datasource  struct{ Type, UID string }
			Targets     []struct{ Expr, Format string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("mdpress.json: %v", err)
	}
	// Imported into a Grafana whose default data source is not this
	// Prometheus, a panel without one shows "no data": each panel reads
	// the dashboard's Prometheus picker.
	picker := slices.ContainsFunc(dash.Templating.List, func(v struct{ Name, Type, Query string }) bool {
		return v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus"
	})
	if !picker {
		t.Errorf("mdpress.json: no datasource variable of type prometheus")
	}
	for _, p := range dash.Panels {
		if p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" {
			t.Errorf("mdpress.json %s: data source %+v, want the ${datasource} variable", p.Title, p.Datasource)
		}
		for _, tg := range p.Targets {
			queries = append(queries, deployQuery{"mdpress.json " + p.Title, tg.Expr})
			if p.Type == "heatmap" && strings.Contains(tg.Expr, "_bucket") && tg.Format != "heatmap" {
				t.Errorf("mdpress.json %s: a heatmap of cumulative buckets needs format heatmap, has %q", p.Title, tg.Format)
			}
		}
	}
	if len(queries) == 0 || len(records) == 0 {
		t.Fatalf("read no queries (%d) or recording rules (%d)", len(queries), len(records))
	}
	return queries, records, jobs
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// exportedLabels scrapes /metrics into family -> label -> values; a
// histogram is listed under its _bucket (with le), _count and _sum series.
func exportedLabels(t *testing.T, h *host) map[string]map[string]map[string]bool {
	t.Helper()
	families := metricFamilies(t, h)
	out := map[string]map[string]map[string]bool{}
	add := func(name, label, value string) {
		if out[name] == nil {
			out[name] = map[string]map[string]bool{}
		}
		if label == "" {
			return
		}
		if out[name][label] == nil {
			out[name][label] = map[string]bool{}
		}
		out[name][label][value] = true
	}
	for name, f := range families {
		names := []string{name}
		if f.GetType().String() == "HISTOGRAM" {
			names = []string{name + "_bucket", name + "_count", name + "_sum"}
			add(name+"_bucket", "le", "+Inf")
		}
		for _, n := range names {
			add(n, "", "")
			for _, m := range f.GetMetric() {
				for _, lp := range m.GetLabel() {
					add(n, lp.GetName(), lp.GetValue())
				}
			}
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
