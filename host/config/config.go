// Package config loads the host's YAML configuration strictly (an unknown
// key is an error naming it), then applies MDPRESS_* environment overrides;
// the command line applies flags last. The embedded default is
// configs/mdpress.yaml, kept identical to the copy in this package.
package config

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/mdpress/mdpress/sdk/stage"
)

//go:embed mdpress.yaml
var defaultYAML []byte

// Default returns the embedded default configuration.
func Default() []byte { return bytes.Clone(defaultYAML) }

// Config is the whole host configuration.
type Config struct {
	Server    Server                    `yaml:"server"`
	DataDir   string                    `yaml:"dataDir"`
	PluginDir string                    `yaml:"pluginDir"`
	Accounts  Accounts                  `yaml:"accounts"`
	Credits   Credits                   `yaml:"credits"`
	Plans     []Plan                    `yaml:"plans"`
	Auth      Stage                     `yaml:"auth"`
	Meter     Stage                     `yaml:"meter"`
	Parse     Stage                     `yaml:"parse"`
	Style     Stage                     `yaml:"style"`
	Render    Stage                     `yaml:"render"`
	Sink      SinkStage                 `yaml:"sink"`
	Dashboard Dashboard                 `yaml:"dashboard"`
	Plugins   map[string]map[string]any `yaml:"plugins"`

	// filePlugins are the stage plugins the file chose, before the
	// environment or a flag chose others for this run.
	filePlugins map[string]string
}

// Dashboard configures the web UI and its self-service sign-up.
type Dashboard struct {
	Enabled        *bool  `yaml:"enabled"`
	Signup         bool   `yaml:"signup"`
	SignupPlan     string `yaml:"signupPlan"`
	SignupsPerHour int    `yaml:"signupsPerHour"`
}

// DashboardEnabled reports whether / serves the dashboard (default yes).
func (c *Config) DashboardEnabled() bool { return c.Dashboard.Enabled == nil || *c.Dashboard.Enabled }

type Server struct {
	Addr            string        `yaml:"addr"`
	PublicURL       string        `yaml:"publicURL"`
	MaxBodyBytes    int64         `yaml:"maxBodyBytes"`
	RequestTimeout  time.Duration `yaml:"requestTimeout"`
	ShutdownTimeout time.Duration `yaml:"shutdownTimeout"`
	MaxConcurrent   int           `yaml:"maxConcurrent"`
	// MaxConcurrentPerKey bounds the conversions one API key runs at
	// once; its others wait in the queue. 0: the API's default (see
	// api.Options).
	MaxConcurrentPerKey int `yaml:"maxConcurrentPerKey"`
	Queue               int `yaml:"queue"`
	// MaxHeldBodyBytes bounds the request bodies held at once, waiting or
	// converting, and the PDFs being written out with them; 0: the API's
	// default (see api.Options).
	MaxHeldBodyBytes int64 `yaml:"maxHeldBodyBytes"`
	// TrustedProxies are addresses or CIDR blocks of the reverse proxies
	// and load balancers in front of the host; see TrustedProxyPrefixes.
	TrustedProxies []string `yaml:"trustedProxies"`
	// MaxConnections bounds the client connections open at once; 0:
	// api.DefaultMaxConnections, lowered to fit the file descriptor limit.
	MaxConnections int `yaml:"maxConnections"`
	// MaxSendingPerAddress is how many connections one client address
	// keeps at the bound while they are still sending their request; 0:
	// api.DefaultSendingPerAddress.
	MaxSendingPerAddress int `yaml:"maxSendingPerAddress"`
}

// TrustedProxyPrefixes is server.trustedProxies as address blocks, a lone
// address as a block of one. It is called on a validated Config.
func (c *Config) TrustedProxyPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, v := range c.Server.TrustedProxies {
		if p, err := parseProxy(v); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func parseProxy(v string) (netip.Prefix, error) {
	if strings.Contains(v, "/") {
		p, err := netip.ParsePrefix(v)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

type Accounts struct {
	Driver string `yaml:"driver"`
	DSN    string `yaml:"dsn"`
}

type Credits struct {
	PerConversion int64  `yaml:"perConversion"`
	WatermarkText string `yaml:"watermarkText"`
}

type Plan struct {
	Name            string `yaml:"name"`
	MonthlyCredits  int64  `yaml:"monthlyCredits"`
	Watermark       bool   `yaml:"watermark"`
	RetentionDays   int64  `yaml:"retentionDays"`
	RateLimitPerMin int64  `yaml:"rateLimitPerMin"`
}

// Stage names the plugin that serves a stage.
type Stage struct {
	Plugin  string        `yaml:"plugin"`
	Timeout time.Duration `yaml:"timeout"`
}

// SinkStage adds the hosted-file settings the host enforces.
type SinkStage struct {
	Plugin       string        `yaml:"plugin"`
	Timeout      time.Duration `yaml:"timeout"`
	MaxFileBytes int64         `yaml:"maxFileBytes"`
	MinTTL       time.Duration `yaml:"minTTL"`
}

// Load reads path, or the embedded default when path is empty, applies
// the environment (getenv, normally os.Getenv), then flags, each override
// in turn, and validates the result. The flags come before the validation
// because they win over the file: a file that names one sink and sets up
// another (sink-mine) was refused before --sink sink-mine could choose it.
func Load(path string, getenv func(string) string, flags ...func(*Config)) (*Config, error) {
	data := defaultYAML
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read config: %w", err)
		}
		data = b
	}
	c, err := Parse(data)
	if err != nil {
		if path != "" {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return nil, err
	}
	if err := c.applyEnv(getenv); err != nil {
		return nil, err
	}
	for _, f := range flags {
		f(c)
	}
	if err := c.Validate(); err != nil && path != "" {
		return c, fmt.Errorf("%s: %w", path, err)
	} else if err != nil {
		return c, err
	}
	return c, nil
}

// Parse decodes YAML strictly and fills defaults for keys left out.
func Parse(data []byte) (*Config, error) {
	c := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c.fillDefaults()
	c.filePlugins = c.StagePlugins()
	return c, nil
}

func (c *Config) fillDefaults() {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.Server.Addr, "127.0.0.1:8080")
	def(&c.DataDir, "data")
	def(&c.Accounts.Driver, "sqlite")
	def(&c.Auth.Plugin, "auth-apikey")
	def(&c.Meter.Plugin, "meter-credits")
	def(&c.Parse.Plugin, "parse-goldmark")
	def(&c.Style.Plugin, "style-themes")
	def(&c.Render.Plugin, "auto")
	def(&c.Sink.Plugin, "sink-disk")
	if c.Server.MaxBodyBytes == 0 {
		c.Server.MaxBodyBytes = 10 << 20
	}
	if c.Server.RequestTimeout == 0 {
		c.Server.RequestTimeout = 2 * time.Minute
	}
	if c.Server.ShutdownTimeout == 0 {
		c.Server.ShutdownTimeout = 30 * time.Second
	}
	if c.Credits.PerConversion == 0 {
		c.Credits.PerConversion = 1
	}
	if c.Sink.MaxFileBytes == 0 {
		c.Sink.MaxFileBytes = 50 << 20
	}
	if c.Sink.MinTTL == 0 {
		c.Sink.MinTTL = 7 * 24 * time.Hour
	}
	def(&c.Dashboard.SignupPlan, "free")
	if c.Dashboard.SignupsPerHour == 0 {
		c.Dashboard.SignupsPerHour = 5
	}
	if c.Plugins == nil {
		c.Plugins = map[string]map[string]any{}
	}
}

// Env names the environment twins of the flags and limits.
var Env = struct {
	Config, Addr, DataDir, Backend, Sink, PublicURL, MaxHostedBytes, MaxBodyBytes, PluginDir, AccountsDriver, AccountsDSN string
}{
	"MDPRESS_CONFIG", "MDPRESS_ADDR", "MDPRESS_DATA_DIR", "MDPRESS_BACKEND", "MDPRESS_SINK", "MDPRESS_PUBLIC_URL",
	"MDPRESS_MAX_HOSTED_BYTES", "MDPRESS_MAX_BODY_BYTES", "MDPRESS_PLUGIN_DIR", "MDPRESS_ACCOUNTS_DRIVER", "MDPRESS_ACCOUNTS_DSN",
}

func (c *Config) applyEnv(getenv func(string) string) error {
	set := func(name string, dst *string) {
		if v := getenv(name); v != "" {
			*dst = v
		}
	}
	set(Env.Addr, &c.Server.Addr)
	set(Env.DataDir, &c.DataDir)
	set(Env.PublicURL, &c.Server.PublicURL)
	set(Env.PluginDir, &c.PluginDir)
	set(Env.AccountsDriver, &c.Accounts.Driver)
	set(Env.AccountsDSN, &c.Accounts.DSN)
	if v := getenv(Env.Backend); v != "" {
		c.SetBackend(v)
	}
	if v := getenv(Env.Sink); v != "" {
		c.SetSink(v)
	}
	for name, dst := range map[string]*int64{Env.MaxHostedBytes: &c.Sink.MaxFileBytes, Env.MaxBodyBytes: &c.Server.MaxBodyBytes} {
		if v := getenv(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("%s=%q: want a positive number of bytes", name, v)
			}
			*dst = n
		}
	}
	return nil
}

// SetBackend selects the render plugin: "chrome", "fpdf", "auto" or a full
// plugin name.
func (c *Config) SetBackend(v string) {
	switch v {
	case "chrome", "fpdf":
		c.Render.Plugin = "render-" + v
	default:
		c.Render.Plugin = v
	}
}

// SetSink selects the sink plugin: "disk", "s3" or a full plugin name.
func (c *Config) SetSink(v string) {
	switch v {
	case "disk", "s3":
		c.Sink.Plugin = "sink-" + v
	default:
		c.Sink.Plugin = v
	}
}

// Validate checks values that decoding cannot. A negative number is an
// error naming its key; 0 asks for the key's default.
func (c *Config) Validate() error {
	if len(c.Plans) == 0 {
		// Most often a file holding only the keys its writer meant to
		// change, as the READMEs show them: say that it is read alone.
		return fmt.Errorf("config: plans: at least one plan is required (a config file is the whole configuration, not changes to the embedded default: start from a copy of configs/mdpress.yaml)")
	}
	seen := map[string]bool{}
	for i, p := range c.Plans {
		if p.Name == "" {
			return fmt.Errorf("config: plans[%d].name is empty", i)
		}
		if seen[p.Name] {
			return fmt.Errorf("config: plans[%d].name %q is defined twice", i, p.Name)
		}
		seen[p.Name] = true
		if p.MonthlyCredits < 0 || p.RetentionDays < 0 || p.RateLimitPerMin < 0 {
			return fmt.Errorf("config: plans[%d] (%s): numbers must not be negative", i, p.Name)
		}
		// A text with nothing to draw would send the plan's PDFs out
		// unmarked: the renderers drop control characters and trim spaces.
		if p.Watermark && !visible(c.Credits.WatermarkText) {
			return fmt.Errorf("config: plans[%d] (%s) has a watermark but credits.watermarkText is empty or has no visible character", i, p.Name)
		}
	}
	switch c.Accounts.Driver {
	case "sqlite", "postgres":
	default:
		return fmt.Errorf("config: accounts.driver %q: want sqlite or postgres", c.Accounts.Driver)
	}
	if c.Dashboard.Signup {
		if _, ok := c.Plan(c.Dashboard.SignupPlan); !ok {
			return fmt.Errorf("config: dashboard.signupPlan %q is not a configured plan", c.Dashboard.SignupPlan)
		}
	}
	// A settings block under a name no stage runs would be ignored
	// silently (plugins.render-chrom: {allowRemote: true}). The built-in
	// backends and sinks are always known: a flag or the environment
	// chooses among them at start. So are the plugins the file itself
	// runs: a flag choosing fpdf for one run over the file's render-mine
	// left plugins.render-mine to no stage, and the file was refused.
	known := map[string]bool{"render-chrome": true, "render-fpdf": true, "sink-disk": true, "sink-s3": true}
	for _, chosen := range []map[string]string{c.filePlugins, c.StagePlugins()} {
		for _, name := range chosen {
			known[name] = true
		}
	}
	delete(known, "auto") // a choice, not a plugin
	for name := range c.Plugins {
		if !known[name] {
			names := slices.Sorted(maps.Keys(known))
			// The typo is as often in the stage's choice as in the block's
			// name (sink.plugin: sink-datd beside plugins.sink-dated): say
			// what the block's stage runs.
			choice := ""
			if st, _, _ := strings.Cut(name, "-"); slices.Contains(stage.Names, st) {
				choice = fmt.Sprintf("%s.plugin is %s; ", st, c.StagePlugins()[st])
			}
			return fmt.Errorf("config: plugins.%s: no stage runs a plugin of that name (%sknown: %s)", name, choice, strings.Join(names, ", "))
		}
	}
	// Hosted-file URLs are this base and a path: without a scheme and a
	// host (pdf.example.com, or a typo) every output=url answer would be
	// a URL no client can open, and nothing said so.
	if u := c.Server.PublicURL; u != "" {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.RawQuery != "" || p.Fragment != "" {
			return fmt.Errorf("config: server.publicURL %q: want an http or https URL such as https://pdf.example.com", u)
		}
	}
	for i, v := range c.Server.TrustedProxies {
		if _, err := parseProxy(v); err != nil {
			return fmt.Errorf("config: server.trustedProxies[%d] %q: want an address or a CIDR block such as 10.0.0.0/8", i, v)
		}
	}
	if c.Sink.MinTTL < time.Second {
		// The sink is sent whole seconds: less would reach it as 0 and
		// fail every output=url request.
		return fmt.Errorf("config: sink.minTTL %v: want at least 1s (default 7 days)", c.Sink.MinTTL)
	}
	if c.Credits.PerConversion < 0 {
		return fmt.Errorf("config: credits.perConversion must not be negative")
	}
	// A limit of 0 asks for its default (for a stage's timeout: no bound
	// of its own); a negative one would be replaced by it unseen, or
	// refuse every request.
	for _, l := range []limit{
		limitOf("server.maxBodyBytes", c.Server.MaxBodyBytes),
		limitOf("server.requestTimeout", c.Server.RequestTimeout),
		limitOf("server.shutdownTimeout", c.Server.ShutdownTimeout),
		limitOf("server.maxConcurrent", c.Server.MaxConcurrent),
		limitOf("server.maxConcurrentPerKey", c.Server.MaxConcurrentPerKey),
		limitOf("server.queue", c.Server.Queue),
		limitOf("server.maxHeldBodyBytes", c.Server.MaxHeldBodyBytes),
		limitOf("server.maxConnections", c.Server.MaxConnections),
		limitOf("server.maxSendingPerAddress", c.Server.MaxSendingPerAddress),
		limitOf("auth.timeout", c.Auth.Timeout),
		limitOf("meter.timeout", c.Meter.Timeout),
		limitOf("parse.timeout", c.Parse.Timeout),
		limitOf("style.timeout", c.Style.Timeout),
		limitOf("render.timeout", c.Render.Timeout),
		limitOf("sink.timeout", c.Sink.Timeout),
		limitOf("sink.maxFileBytes", c.Sink.MaxFileBytes),
		limitOf("dashboard.signupsPerHour", c.Dashboard.SignupsPerHour),
	} {
		if l.negative {
			return fmt.Errorf("config: %s %v: must not be negative", l.key, l.value)
		}
	}
	for _, s := range []struct{ key, plugin string }{
		{"auth.plugin", c.Auth.Plugin}, {"meter.plugin", c.Meter.Plugin}, {"parse.plugin", c.Parse.Plugin},
		{"style.plugin", c.Style.Plugin}, {"render.plugin", c.Render.Plugin}, {"sink.plugin", c.Sink.Plugin},
	} {
		if strings.ContainsAny(s.plugin, `/\`) || s.plugin == ".." {
			return fmt.Errorf("config: %s %q must be a plugin name, not a path", s.key, s.plugin)
		}
	}
	return nil
}

// ValidateAccounts checks what opening the account store needs, apart
// from Validate: `mdpress render` and `plugins list` never open it, and
// refused the production config on a machine without its database's DSN.
func (c *Config) ValidateAccounts() error {
	if c.Accounts.Driver == "postgres" && c.Accounts.DSN == "" {
		return fmt.Errorf("config: accounts.dsn is required for postgres (set %s)", Env.AccountsDSN)
	}
	return nil
}

// visible reports whether s has a character a renderer draws: not a space,
// not a control or format character.
func visible(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsGraphic(r) && !unicode.IsSpace(r) }) >= 0
}

// limit is a number of the config, for Validate.
type limit struct {
	key      string
	value    any // as the message shows it
	negative bool
}

func limitOf[T int | int64 | time.Duration](key string, v T) limit {
	return limit{key: key, value: v, negative: v < 0}
}

// StagePlugins returns the plugin name per stage, in pipeline order.
func (c *Config) StagePlugins() map[string]string {
	return map[string]string{
		stage.NameAuth: c.Auth.Plugin, stage.NameMeter: c.Meter.Plugin, stage.NameParse: c.Parse.Plugin,
		stage.NameStyle: c.Style.Plugin, stage.NameRender: c.Render.Plugin, stage.NameSink: c.Sink.Plugin,
	}
}

// PluginConfig returns a plugin's config block as JSON ({} when absent).
func (c *Config) PluginConfig(name string) ([]byte, error) {
	block := c.Plugins[name]
	if block == nil {
		return []byte("{}"), nil
	}
	b, err := json.Marshal(block)
	if err != nil {
		return nil, fmt.Errorf("config: plugins.%s: %w", name, err)
	}
	return b, nil
}

// StagePlans converts the plans for plugins.
func (c *Config) StagePlans() []stage.Plan {
	out := make([]stage.Plan, len(c.Plans))
	for i, p := range c.Plans {
		out[i] = stage.Plan{Name: p.Name, MonthlyCredits: p.MonthlyCredits, Watermark: p.Watermark,
			RetentionDays: p.RetentionDays, RateLimitPerMin: p.RateLimitPerMin}
	}
	return out
}

// Plan returns the named plan.
func (c *Config) Plan(name string) (Plan, bool) {
	for _, p := range c.Plans {
		if p.Name == name {
			return p, true
		}
	}
	return Plan{}, false
}

// PublicURL is the base of hosted-file URLs.
func (c *Config) PublicURL() string {
	if c.Server.PublicURL != "" {
		return strings.TrimRight(c.Server.PublicURL, "/")
	}
	return "http://" + c.Server.Addr
}

// AbsDataDir returns the data dir as an absolute path.
func (c *Config) AbsDataDir() (string, error) { return filepath.Abs(c.DataDir) }
