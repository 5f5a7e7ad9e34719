package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mdpress/mdpress/host/config"
	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// operatorAlerts are the colours the operator's design below gives each
// kind of alert, in alertKinds' order, none of them GitHub's.
var operatorAlerts = [][3]byte{{0x00, 0xcc, 0xcc}, {0xcc, 0x00, 0xcc}, {0xcc, 0x66, 0x00}, {0x00, 0x00, 0xff}, {0x66, 0x00, 0x99}}

// TestOperatorAlertColours: an operator's theme that recolours the alerts
// (basic.json's alertColors, in style-themes' themesDir) reaches both
// backends, Chromium through the CSS and render-fpdf through the tokens:
// each alert's title and bar are in the operator's colour and not in
// GitHub's. render-fpdf drew GitHub's colours whatever the theme said.
// The design works alone too, over the built-in stylesheet: a basic.json
// without a basic.css was skipped without a word, GitHub's colours kept.
func TestOperatorAlertColours(t *testing.T) {
	pdfcheck.Require(t)
	css, err := os.ReadFile("../../plugins/style-themes/themes/css/basic.css")
	if err != nil {
		t.Fatal(err)
	}
	design := `{"alertColors": {"note": "#00cccc", "tip": "#cc00cc", "important": "#cc6600", "warning": "#0000ff", "caution": "#660099"}}`
	t.Run("with its stylesheet", func(t *testing.T) {
		operatorAlertColours(t, map[string][]byte{"basic.css": css, "basic.json": []byte(design)})
	})
	t.Run("design alone", func(t *testing.T) {
		operatorAlertColours(t, map[string][]byte{"basic.json": []byte(design)})
	})
}

// operatorAlertColours renders the alerts on every backend with files in
// style-themes' themesDir, and wants operatorAlerts' colours.
func operatorAlertColours(t *testing.T, files map[string][]byte) {
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var doc map[string]any
	if err := yaml.Unmarshal(config.Default(), &doc); err != nil {
		t.Fatal(err)
	}
	doc["plugins"].(map[string]any)["style-themes"] = map[string]any{"themesDir": dir}
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mdpress.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	src := alertsSample()
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--config", path, "--backend", backend))
			defer h.stop()
			_, key := h.account("pro", -1)
			resp, pdf := h.post(key, map[string]string{"markdown": src, "theme": "basic", "pageNumeration": "none"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
			}
			words := pdfcheck.Words(t, pdf)
			find := func(s string) pdfcheck.Word { t.Helper(); return wordIs(t, words, s) }
			dpi := 144
			w, hgt, pix := pdfcheck.PPM(t, pdf, 1, dpi)
			img := raster{w: w, h: hgt, pix: pix, scale: float64(dpi) / 72}
			for i, k := range alertKinds {
				title, body := find(k.title), find(k.body)
				c := operatorAlerts[i]
				if n := img.near(title, 0, c[0], c[1], c[2]); n == 0 {
					t.Errorf("%s: the title has no pixel of the operator's #%x", k.title, c)
				}
				if n := img.near(body, -2, c[0], c[1], c[2]); n == 0 {
					t.Errorf("%s: no bar of the operator's #%x left of the body", k.title, c)
				}
				if n := img.near(title, 0, k.r, k.g, k.b) + img.near(body, -2, k.r, k.g, k.b); n > 0 {
					t.Errorf("%s: %d pixels of GitHub's #%02x%02x%02x", k.title, n, k.r, k.g, k.b)
				}
			}
		})
	}
}
