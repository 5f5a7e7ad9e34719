package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// documentedFamily is a metric family a README names, with the labels it
// gives it, and where.
type documentedFamily struct {
	where, name string
	labels      []string
}

// TestReadmeMetricsExported: every family the READMEs name is in a real
// server's /metrics, with the labels they give it. Operators write their
// queries from the README's list, not from a scrape; the deploy queries
// have TestDeployQueriesMatchMetrics, the prose had nothing. A family of
// render-chrome's needs Chromium, and is checked only where it runs.
func TestReadmeMetricsExported(t *testing.T) {
	documented := readmeFamilies(t)
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			_, key := h.account("pro", 10)
			if resp, body := h.post(key, map[string]string{"markdown": "# One"}); resp.StatusCode != 200 {
				t.Fatalf("conversion: %d %.200s", resp.StatusCode, body)
			}
			families := metricFamilies(t, h)
			for _, d := range documented {
				if strings.HasPrefix(d.name, "mdpress_chrome_") != (backend == "chrome") {
					continue
				}
				f, ok := families[d.name]
				if !ok {
					t.Errorf("%s names %s, which /metrics does not have", d.where, d.name)
					continue
				}
				// A family without series yet (no plugin has restarted)
				// shows no labels to hold the README to.
				if len(f.GetMetric()) == 0 {
					continue
				}
				have := map[string]bool{}
				for _, m := range f.GetMetric() {
					for _, lp := range m.GetLabel() {
						have[lp.GetName()] = true
					}
				}
				for _, l := range d.labels {
					if !have[l] {
						t.Errorf("%s names %s{%s}: /metrics has no label %q on it (it has %v)", d.where, d.name, strings.Join(d.labels, ","), l, keys(have))
					}
				}
			}
		})
	}
}

// readmeFamilies reads the families named in backquotes in the READMEs:
// `mdpress_x_total`, `mdpress_x{a,b}`, `mdpress_x{a="v"}`, and a suffix
// after one (`mdpress_conversions_running` and `_queued`) as that family's
// name with its last word replaced.
func readmeFamilies(t *testing.T) []documentedFamily {
	t.Helper()
	root := filepath.Join("..", "..")
	readmes, _ := filepath.Glob(filepath.Join(root, "plugins", "*", "README.md"))
	readmes = append(readmes, filepath.Join(root, "README.md"), filepath.Join(root, "sdk", "README.md"))
	code := regexp.MustCompile("`([^`\n]+)`")
	family := regexp.MustCompile(`^(mdpress_[a-z_]+)(?:\{([^}]*)\})?$`)
	suffix := regexp.MustCompile(`^_[a-z_]+$`)
	var out []documentedFamily
	for _, p := range readmes {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Skipf("READMEs not beside the module: %v", err)
		}
		rel, _ := filepath.Rel(root, p)
		var stem string
		for _, m := range code.FindAllStringSubmatch(string(b), -1) {
			span := m[1]
			if suffix.MatchString(span) && stem != "" {
				out = append(out, documentedFamily{where: rel, name: stem + span})
				continue
			}
			f := family.FindStringSubmatch(span)
			if f == nil {
				continue
			}
			d := documentedFamily{where: rel, name: f[1]}
			for l := range strings.SplitSeq(f[2], ",") {
				if l, _, _ = strings.Cut(strings.TrimSpace(l), "="); l != "" {
					d.labels = append(d.labels, l)
				}
			}
			out = append(out, d)
			stem = f[1][:strings.LastIndexByte(f[1], '_')]
		}
	}
	if len(out) == 0 {
		t.Fatal("the READMEs name no metric family")
	}
	return out
}
