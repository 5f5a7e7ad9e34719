package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mdpress/mdpress/core/accounts"
	"github.com/mdpress/mdpress/host/config"
	"github.com/mdpress/mdpress/host/supervisor"
	"github.com/mdpress/mdpress/sdk/stage"
)

// globals are the flags every command shares. Flags win over MDPRESS_*
// environment variables, which win over the config file.
type globals struct {
	configPath string
	dataDir    string
	pluginDir  string
	logLevel   string
	logFormat  string
}

func (g *globals) bind(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&g.configPath, "config", "", "config file (env MDPRESS_CONFIG; default: the embedded configs/mdpress.yaml)")
	f.StringVar(&g.dataDir, "data-dir", "", "data directory: the SQLite accounts and hosted files (env MDPRESS_DATA_DIR; default: the config's dataDir, ./data in the embedded one)")
	f.StringVar(&g.pluginDir, "plugin-dir", "", "directory of plugin binaries (env MDPRESS_PLUGIN_DIR; default: <binary dir>/plugins)")
	f.StringVar(&g.logLevel, "log-level", "info", "debug, info, warn or error (env MDPRESS_LOG_LEVEL; render and plugins default to warn)")
	f.StringVar(&g.logFormat, "log-format", "text", "text or json (env MDPRESS_LOG_FORMAT)")
}

// twin is a command's flag and its MDPRESS_* environment variable.
type twin struct{ flag, env string }

// envTwins sets each flag not given on the command line from its twin in
// the environment, when set: an operator sets once per deployment what a
// flag sets once per run.
func envTwins(cmd *cobra.Command, twins ...twin) error {
	for _, t := range twins {
		v := os.Getenv(t.env)
		if v == "" || cmd.Flags().Changed(t.flag) {
			continue
		}
		if err := cmd.Flags().Set(t.flag, v); err != nil {
			// pflag's own error for a switch ends in strconv's
			// "parsing \"yes\": invalid syntax", which says neither
			// what is wanted nor that yes and on are not it.
			if f := cmd.Flags().Lookup(t.flag); f != nil && f.Value.Type() == "bool" {
				return fmt.Errorf("%s=%q (the environment's --%s): want true or false (or 1, 0)", t.env, v, t.flag)
			}
			return fmt.Errorf("%s=%q (the environment's --%s): %v", t.env, v, t.flag, err)
		}
	}
	return nil
}

// levelName and formatName are the log level and format from the flag,
// else the environment, else the flag's default.
func (g *globals) levelName(cmd *cobra.Command) string {
	if v := os.Getenv("MDPRESS_LOG_LEVEL"); v != "" && !cmd.Flags().Changed("log-level") {
		return v
	}
	if v := cmd.Annotations[defaultLogLevel]; v != "" && !cmd.Flags().Changed("log-level") {
		return v
	}
	return g.logLevel
}

// defaultLogLevel annotates a command whose default log level is not
// info: a one-shot command (render, plugins) prints its own result, and a
// dozen lines of plugins starting and stopping around it buried the one
// line a user ran it for. Its warnings and errors still show, and
// --log-level info brings the rest back.
const defaultLogLevel = "mdpress/default-log-level"

// quiet is the annotation of such a command.
var quiet = map[string]string{defaultLogLevel: "warn"}

func (g *globals) formatName(cmd *cobra.Command) string {
	if v := os.Getenv("MDPRESS_LOG_FORMAT"); v != "" && !cmd.Flags().Changed("log-format") {
		return v
	}
	return g.logFormat
}

// checkLogging refuses a log level or format it does not know.
func (g *globals) checkLogging(cmd *cobra.Command) error {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(g.levelName(cmd))); err != nil {
		return fmt.Errorf("log level %q (--log-level, MDPRESS_LOG_LEVEL): want debug, info, warn or error", g.levelName(cmd))
	}
	if f := g.formatName(cmd); f != "text" && f != "json" {
		return fmt.Errorf("log format %q (--log-format, MDPRESS_LOG_FORMAT): want text or json", f)
	}
	return nil
}

// level is the log level (checked before any command runs).
func (g *globals) level(cmd *cobra.Command) slog.Level {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(g.levelName(cmd))); err != nil {
		lvl = slog.LevelInfo
	}
	return lvl
}

func (g *globals) logger(cmd *cobra.Command) *slog.Logger {
	format := g.formatName(cmd)
	opts := &slog.HandlerOptions{Level: g.level(cmd)}
	if format == "json" {
		// As text writes them and the plugins' lines say them ("took":
		// "1.285s"): JSON's default, integer nanoseconds, made the
		// drain's timeout 30000000000 beside them.
		opts.ReplaceAttr = func(_ []string, a slog.Attr) slog.Attr {
			if a.Value.Kind() == slog.KindDuration {
				return slog.String(a.Key, a.Value.Duration().String())
			}
			return a
		}
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// load reads the config with environment and flags applied: the global
// flags, then the command's own (flags), all before the config is
// validated.
func (g *globals) load(cmd *cobra.Command, flags ...func(*config.Config)) (*config.Config, error) {
	path := g.configPath
	if path == "" {
		path = os.Getenv(config.Env.Config)
	}
	global := func(c *config.Config) {
		if cmd.Flags().Changed("data-dir") {
			c.DataDir = g.dataDir
		}
		if cmd.Flags().Changed("plugin-dir") {
			c.PluginDir = g.pluginDir
		}
	}
	c, err := config.Load(path, os.Getenv, append([]func(*config.Config){global}, flags...)...)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(c.DataDir)
	if err != nil {
		return nil, err
	}
	c.DataDir = dir
	if c.PluginDir == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find plugin dir: %w", err)
		}
		exe, _ = filepath.EvalSymlinks(exe)
		c.PluginDir = filepath.Join(filepath.Dir(exe), "plugins")
	}
	return c, nil
}

// openStore opens the account store the config names.
func openStore(ctx context.Context, c *config.Config) (accounts.Store, error) {
	if err := c.ValidateAccounts(); err != nil {
		return nil, err
	}
	return accounts.Open(ctx, c.Accounts.Driver, accountsDSN(c), c.StagePlans())
}

// accountsDSN is the store's DSN, the SQLite file in the data dir by
// default, as the auth and meter plugins resolve it.
func accountsDSN(c *config.Config) string {
	if c.Accounts.Driver == accounts.DriverSQLite && c.Accounts.DSN == "" {
		return filepath.Join(c.DataDir, "mdpress.db")
	}
	return c.Accounts.DSN
}

// resolveRender turns render.plugin "auto" into render-chrome when a
// Chromium is found and render-fpdf otherwise, saying so in the log.
func resolveRender(c *config.Config, log *slog.Logger) {
	if c.Render.Plugin != "auto" {
		return
	}
	path, configured := findChromium(c)
	if path != "" {
		c.Render.Plugin = "render-chrome"
		log.Info("rendering with render-chrome", "chromium", path)
		return
	}
	c.Render.Plugin = "render-fpdf"
	if configured != "" {
		log.Warn("render-chrome's chromePath does not exist: rendering with render-fpdf; CSS, <style> blocks and most inline HTML are not applied "+
			"(correct plugins.render-chrome.chromePath, or set render.plugin to silence this)", "chromePath", configured)
		return
	}
	log.Warn("no Chromium found: rendering with render-fpdf; CSS, <style> blocks and most inline HTML are not applied " +
		"(install chromium, or set render.plugin to silence this)")
}

// findChromium returns the browser render-chrome would run, or "", and
// the chromePath configured for it.
func findChromium(c *config.Config) (path, configured string) {
	if block := c.Plugins["render-chrome"]; block != nil {
		if p, _ := block["chromePath"].(string); p != "" {
			// render-chrome runs the configured browser or none: a
			// Chromium found elsewhere made auto choose render-chrome,
			// which then failed to start, and serve with it.
			if _, err := os.Stat(p); err == nil {
				return p, p
			}
			return "", p
		}
	}
	// The places render-chrome looks, in its order (chrome.findChrome): a
	// browser only it found made auto choose render-fpdf.
	for _, p := range []string{"/usr/lib/chromium/chromium", "/usr/lib/chromium-browser/chromium-browser",
		"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless-shell"} {
		if strings.HasPrefix(p, "/") {
			if _, err := os.Stat(p); err == nil {
				return p, ""
			}
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path, ""
		}
	}
	return "", ""
}

// specs builds the supervisor specs for the given stages.
func specs(c *config.Config, stages ...string) ([]supervisor.Spec, error) {
	plugins := c.StagePlugins()
	out := make([]supervisor.Spec, 0, len(stages))
	for _, s := range stages {
		// The key check and the meter open the account store.
		if s == stage.NameAuth || s == stage.NameMeter {
			if err := c.ValidateAccounts(); err != nil {
				return nil, err
			}
		}
		name := plugins[s]
		block, err := c.PluginConfig(name)
		if err != nil {
			return nil, err
		}
		out = append(out, supervisor.Spec{Stage: s, Plugin: name, Config: &stage.ConfigureRequest{
			Config: block, DataDir: c.DataDir, PublicURL: c.PublicURL(),
			Accounts: stage.AccountsConfig{Driver: c.Accounts.Driver, DSN: c.Accounts.DSN},
			Plans:    c.StagePlans(),
		}})
	}
	return out, nil
}
