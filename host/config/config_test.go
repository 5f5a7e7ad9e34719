package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestEmbeddedDefaultMatchesConfigsDir(t *testing.T) {
	onDisk, err := os.ReadFile("../../configs/mdpress.yaml")
	if err != nil {
		t.Skipf("configs/mdpress.yaml not beside the module: %v", err)
	}
	if !bytes.Equal(onDisk, defaultYAML) {
		t.Fatal("configs/mdpress.yaml and host/config/mdpress.yaml differ; copy one onto the other")
	}
}

func TestDefault(t *testing.T) {
	c, err := Load("", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	free, ok := c.Plan("free")
	if !ok || free.MonthlyCredits != 50 || !free.Watermark || free.RetentionDays != 0 || free.RateLimitPerMin != 60 {
		t.Errorf("free plan: %+v", free)
	}
	pro, ok := c.Plan("pro")
	if !ok || pro.MonthlyCredits != 5000 || pro.Watermark || pro.RetentionDays != 30 {
		t.Errorf("pro plan: %+v", pro)
	}
	if c.Accounts.Driver != "sqlite" || c.Sink.Plugin != "sink-disk" || c.Render.Plugin != "auto" {
		t.Errorf("defaults: %+v %+v %+v", c.Accounts, c.Sink, c.Render)
	}
	if c.Sink.MaxFileBytes != 50<<20 || c.Server.MaxBodyBytes != 10<<20 {
		t.Errorf("limits: %d %d", c.Sink.MaxFileBytes, c.Server.MaxBodyBytes)
	}
	if c.PublicURL() != "http://127.0.0.1:8080" {
		t.Errorf("public URL %q", c.PublicURL())
	}
}

func TestEnvironmentOverrides(t *testing.T) {
	env := map[string]string{
		"MDPRESS_ADDR": "127.0.0.1:9999", "MDPRESS_BACKEND": "fpdf", "MDPRESS_SINK": "s3",
		"MDPRESS_MAX_HOSTED_BYTES": "60000", "MDPRESS_PUBLIC_URL": "https://pdf.example.com/",
	}
	c, err := Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Addr != "127.0.0.1:9999" || c.Render.Plugin != "render-fpdf" || c.Sink.Plugin != "sink-s3" ||
		c.Sink.MaxFileBytes != 60000 || c.PublicURL() != "https://pdf.example.com" {
		t.Fatalf("overrides not applied: %+v", c)
	}
	env["MDPRESS_MAX_BODY_BYTES"] = "lots"
	if _, err := Load("", func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "MDPRESS_MAX_BODY_BYTES") {
		t.Fatalf("bad number accepted: %v", err)
	}
}

func TestStrict(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"server:\n  adress: x\n", "adress"},
		{"plans: []\n", "at least one plan"},
		{"plugins: {style-themes: {themesDir: /etc/mdpress/themes}}\n", "start from a copy of configs/mdpress.yaml"},
		{"plans:\n  - name: a\n  - name: a\n", "twice"},
		{"plans:\n  - name: a\naccounts:\n  driver: mysql\n", "mysql"},
		{"plans:\n  - name: a\nrender:\n  plugin: ../../bin/sh\n", "not a path"},
		{"plans:\n  - name: a\nsink:\n  minTTL: 500ms\n", "sink.minTTL"},
		{"plans:\n  - name: a\nserver:\n  publicURL: pdf.example.com\n", "server.publicURL"},
		{"plans:\n  - name: a\nserver:\n  publicURL: ftp://pdf.example.com\n", "server.publicURL"},
		{"plans:\n  - name: a\nserver:\n  publicURL: \"https:///x\"\n", "server.publicURL"},
		{"plans:\n  - name: a\nserver:\n  publicURL: \"https://pdf.example.com/?a=1\"\n", "server.publicURL"},
		{"plans:\n  - name: a\nserver:\n  trustedProxies: [10.0.0.0/8, proxy.internal]\n", "server.trustedProxies[1]"},
		{"plans:\n  - name: a\nserver:\n  trustedProxies: [10.0.0.0/33]\n", "server.trustedProxies[0]"},
		{"plans:\n  - name: a\nplugins:\n  render-chrom:\n    allowRemote: true\n", "plugins.render-chrom: no stage runs a plugin of that name (render.plugin is auto; "},
		{"plans:\n  - name: a\nsink:\n  plugin: sink-datd\nplugins:\n  sink-dated:\n    dir: /srv/pdfs\n", "plugins.sink-dated: no stage runs a plugin of that name (sink.plugin is sink-datd; "},
		{"plans:\n  - name: a\nsink:\n  minTTL: -1h\n", "sink.minTTL"},
		{"plans:\n  - name: a\nserver:\n  queue: -1\n", "server.queue -1"},
		{"plans:\n  - name: a\nserver:\n  maxHeldBodyBytes: -1\n", "server.maxHeldBodyBytes -1"},
		{"plans:\n  - name: a\nserver:\n  maxConcurrent: -4\n", "server.maxConcurrent -4"},
		{"plans:\n  - name: a\nserver:\n  maxBodyBytes: -1\n", "server.maxBodyBytes -1"},
		{"plans:\n  - name: a\nserver:\n  requestTimeout: -1s\n", "server.requestTimeout -1s"},
		{"plans:\n  - name: a\nserver:\n  shutdownTimeout: -1s\n", "server.shutdownTimeout -1s"},
		{"plans:\n  - name: a\nrender:\n  timeout: -60s\n", "render.timeout -1m0s"},
		{"plans:\n  - name: a\nparse:\n  timeout: -1s\n", "parse.timeout -1s"},
		{"plans:\n  - name: a\nsink:\n  timeout: -1s\n", "sink.timeout -1s"},
		{"plans:\n  - name: a\nsink:\n  maxFileBytes: -1\n", "sink.maxFileBytes -1"},
		{"plans:\n  - name: a\ndashboard:\n  signupsPerHour: -1\n", "dashboard.signupsPerHour -1"},
		{"plans:\n  - name: a\n    watermark: true\ncredits:\n  watermarkText: \" \"\n", "credits.watermarkText is empty"},
		{"plans:\n  - name: a\n    watermark: true\ncredits:\n  watermarkText: \"\\x01\\x7f\"\n", "credits.watermarkText is empty"},
		{"plans:\n  - name: a\n    watermark: true\ncredits:\n  watermarkText: \"\\u200b\\u00a0\"\n", "credits.watermarkText is empty"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		path := dir + "/c.yaml"
		if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want mention of %q", tt.yaml, err, tt.want)
		}
	}
}

// TestZeroLimitsTakeDefaults: 0 is how configs/mdpress.yaml asks for the
// default of server.maxConcurrent and server.queue (the API server applies
// it); only a negative number is an error.
func TestZeroLimitsTakeDefaults(t *testing.T) {
	path := t.TempDir() + "/c.yaml"
	if err := os.WriteFile(path, []byte("plans:\n  - name: a\nserver:\n  maxConcurrent: 0\n  queue: 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.MaxConcurrent != 0 || c.Server.Queue != 0 {
		t.Fatalf("server %+v: 0 must reach the API server as 0", c.Server)
	}
}

func TestPluginConfigJSON(t *testing.T) {
	c, _ := Parse([]byte("plans:\n  - name: a\nplugins:\n  render-chrome:\n    tabs: 3\n"))
	b, err := c.PluginConfig("render-chrome")
	if err != nil || string(b) != `{"tabs":3}` {
		t.Fatalf("%s %v", b, err)
	}
	if b, _ := c.PluginConfig("nope"); string(b) != "{}" {
		t.Fatalf("absent block = %s", b)
	}
}

// TestDefaultNamesEveryKey: configs/mdpress.yaml is where operators look
// up a key and its default, so it sets every key Config decodes.
func TestDefaultNamesEveryKey(t *testing.T) {
	var doc map[string]any
	if err := yaml.Unmarshal(defaultYAML, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(prefix string, typ reflect.Type, node any)
	walk = func(prefix string, typ reflect.Type, node any) {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		switch typ.Kind() {
		case reflect.Struct:
			if typ == reflect.TypeOf(time.Duration(0)) {
				return
			}
			m, _ := node.(map[string]any)
			for f := range typ.Fields() {
				if !f.IsExported() {
					continue // not decoded
				}
				key := strings.Split(f.Tag.Get("yaml"), ",")[0]
				v, ok := m[key]
				if !ok {
					t.Errorf("configs/mdpress.yaml does not set %s%s", prefix, key)
					continue
				}
				walk(prefix+key+".", f.Type, v)
			}
		case reflect.Slice:
			if items, _ := node.([]any); len(items) > 0 {
				walk(strings.TrimSuffix(prefix, ".")+"[0].", typ.Elem(), items[0])
			}
		}
	}
	walk("", reflect.TypeOf(Config{}), doc)
}

// TestReadmeConfigsDecode: a YAML example in a README is a config an
// operator copies; each must decode strictly (plans added where it has
// none, as it shows a part).
func TestReadmeConfigsDecode(t *testing.T) {
	readmes, _ := filepath.Glob("../../plugins/*/README.md")
	readmes = append(readmes, "../../README.md", "../../sdk/README.md")
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	n := 0
	for _, p := range readmes {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Skipf("READMEs not beside the module: %v", err)
		}
		for _, m := range block.FindAllSubmatch(b, -1) {
			n++
			y := m[1]
			if !bytes.Contains(y, []byte("plans:")) {
				y = append([]byte("plans: [{name: free, monthlyCredits: 50}]\n"), y...)
			}
			if c, err := Parse(y); err != nil {
				t.Errorf("%s: %v\n%s", p, err, m[1])
			} else if err := c.Validate(); err != nil {
				t.Errorf("%s: %v\n%s", p, err, m[1])
			}
		}
	}
	if n == 0 {
		t.Fatal("no yaml block found in the READMEs")
	}
}

func TestTrustedProxyPrefixes(t *testing.T) {
	c := &Config{Server: Server{TrustedProxies: []string{"10.1.2.3/8", "192.0.2.7", "::ffff:198.51.100.1", "fd00::/8"}}}
	got := fmt.Sprint(c.TrustedProxyPrefixes())
	if want := "[10.0.0.0/8 192.0.2.7/32 198.51.100.1/32 fd00::/8]"; got != want {
		t.Fatalf("TrustedProxyPrefixes = %s, want %s", got, want)
	}
}
