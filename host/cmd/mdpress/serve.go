package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/mdpress/mdpress/core/accounts"
	"github.com/mdpress/mdpress/host/api"
	"github.com/mdpress/mdpress/host/config"
	"github.com/mdpress/mdpress/host/metrics"
	"github.com/mdpress/mdpress/host/supervisor"
	"github.com/mdpress/mdpress/host/version"
	"github.com/mdpress/mdpress/host/web"
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"
)

func newServe(g *globals) *cobra.Command {
	var addr, backend, sink, publicURL, devPlan, debugAddr string
	var devAccount bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API over the configured stage plugins",
		Example: `  mdpress serve --dev-account                       # the embedded default on 127.0.0.1:8080; prints a key on the first start
  mdpress serve --addr 127.0.0.1:8081 --backend fpdf
  mdpress serve --config /etc/mdpress/production.yaml --public-url https://pdf.example.com`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := envTwins(cmd, twin{"dev-account", "MDPRESS_DEV_ACCOUNT"}, twin{"dev-plan", "MDPRESS_DEV_PLAN"},
				twin{"debug-addr", "MDPRESS_DEBUG_ADDR"}); err != nil {
				return err
			}
			log := g.logger(cmd)
			c, err := g.load(cmd, func(c *config.Config) {
				if cmd.Flags().Changed("addr") {
					c.Server.Addr = addr
				}
				if cmd.Flags().Changed("backend") {
					c.SetBackend(backend)
				}
				if cmd.Flags().Changed("sink") {
					c.SetSink(sink)
				}
				if cmd.Flags().Changed("public-url") {
					c.Server.PublicURL = publicURL
				}
			})
			if err != nil {
				return err
			}
			// Before the port opens and any plugin starts.
			if err := c.ValidateAccounts(); err != nil {
				return err
			}
			resolveRender(c, log)
			if err := os.MkdirAll(c.DataDir, 0o750); err != nil {
				return fmt.Errorf("data dir: %w", err)
			}
			// Listen before anything starts: a port in use is found before
			// the plugins (and a browser) are launched, and a port of 0
			// becomes the one bound, which hosted URLs and hints name.
			ln, err := net.Listen("tcp", c.Server.Addr)
			if err != nil {
				return listenError(c.Server.Addr, err)
			}
			defer ln.Close()
			if _, port, _ := net.SplitHostPort(c.Server.Addr); port == "0" {
				c.Server.Addr = ln.Addr().String()
			}
			// Behind no proxy, a wildcard address (:8080, 0.0.0.0:8080) made
			// hosted-file URLs such as http://:8080/v1/files/..., which no
			// client can open.
			if h, _, _ := net.SplitHostPort(c.Server.Addr); c.Server.PublicURL == "" && (h == "" || net.ParseIP(h).IsUnspecified()) {
				log.Warn("hosted-file URLs name a wildcard listen address that clients cannot open: set server.publicURL ("+config.Env.PublicURL+")", "publicURL", c.PublicURL())
			}
			ctx := cmd.Context()
			if devAccount {
				if err := ensureDevAccount(ctx, c, devPlan, cmd.OutOrStdout()); err != nil {
					return err
				}
			}

			reg := prometheus.NewRegistry()
			m := metrics.New(reg)
			sup := supervisor.New(log, c.PluginDir, supervisor.WithRestartHook(m.PluginRestarted), supervisor.WithLogLevel(g.level(cmd)))
			sp, err := specs(c, stage.Names...)
			if err != nil {
				return err
			}
			for _, s := range sp {
				m.PluginsLaunched(s.Plugin)
			}
			start := time.Now()
			if err := sup.Start(ctx, sp); err != nil {
				if ctx.Err() != nil {
					// SIGTERM or Ctrl-C while the plugins (a browser) were
					// starting: a stop asked for, as after startup, not a
					// failure for a service manager to report.
					log.Info("stopped during startup", "reason", context.Cause(ctx))
					return nil
				}
				return err
			}
			defer sup.Stop()
			log.Info("plugins ready", "took", time.Since(start).Round(time.Millisecond), "render", c.Render.Plugin, "sink", c.Sink.Plugin,
				// Where the accounts live: a DSN or a data dir set somewhere
				// unexpected (the environment, a flag) is seen at once.
				"accounts", accounts.Where(c.Accounts.Driver, accountsDSN(c)))

			opts := api.Options{
				PublicURL: c.PublicURL(), MaxBodyBytes: c.Server.MaxBodyBytes, MaxHostedBytes: c.Sink.MaxFileBytes,
				RequestTimeout: c.Server.RequestTimeout, CreditsPerConversion: c.Credits.PerConversion,
				AuthTimeout: c.Auth.Timeout, MeterTimeout: c.Meter.Timeout, ParseTimeout: c.Parse.Timeout,
				StyleTimeout: c.Style.Timeout, RenderTimeout: c.Render.Timeout, SinkTimeout: c.Sink.Timeout,
				MaxConcurrent: c.Server.MaxConcurrent, MaxConcurrentPerKey: c.Server.MaxConcurrentPerKey, Queue: c.Server.Queue, MaxHeldBodyBytes: c.Server.MaxHeldBodyBytes,
				WatermarkText: c.Credits.WatermarkText, MinTTL: c.Sink.MinTTL, TrustedProxies: c.TrustedProxyPrefixes(),
				MetricsSource: pluginMetrics(sup),
			}
			if c.DashboardEnabled() && c.Dashboard.Signup {
				st, err := openStore(ctx, c)
				if err != nil {
					return err
				}
				defer st.Close()
				opts.Signup = func(ctx context.Context) (string, string, error) {
					a, key, _, err := st.CreateAccountWithKey(ctx, c.Dashboard.SignupPlan, nil)
					return a.ID, key, err
				}
				opts.SignupsPerHour = c.Dashboard.SignupsPerHour
			}
			if c.DashboardEnabled() {
				var webOpts []web.Option
				if opts.Signup != nil {
					webOpts = append(webOpts, web.WithSignup(c.Dashboard.SignupPlan))
				}
				opts.Dashboard = web.Handler(webOpts...)
			}
			handler := api.New(opts, log, sup, m)

			// Requests' contexts end when a shutdown gives up on them, so
			// that each refunds its reservation while the meter still runs.
			reqCtx, cutRequests := context.WithCancelCause(context.WithoutCancel(ctx))
			defer cutRequests(nil)
			conns := api.NewConnLimit(maxConnections(c.Server.MaxConnections, log),
				api.WithSendingPerAddress(c.Server.MaxSendingPerAddress), api.WithTrustedProxies(opts.TrustedProxies),
				api.WithMetrics(m), api.WithLogger(log))
			srv := &http.Server{
				Handler:           conns.Handler(handler),
				ConnState:         conns.ConnState,
				ConnContext:       conns.ConnContext,
				BaseContext:       func(net.Listener) context.Context { return reqCtx },
				ReadHeaderTimeout: 10 * time.Second,
				ReadTimeout:       time.Minute,
				WriteTimeout:      c.Server.RequestTimeout + time.Minute,
				IdleTimeout:       2 * time.Minute,
			}
			if debugAddr != "" {
				go serveDebug(debugAddr, log)
			}
			runCtx, cancelRun := context.WithCancel(ctx)
			defer cancelRun()
			go sup.Run(runCtx)

			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(conns.Listener(ln)) }()
			log.Info("serving", "addr", ln.Addr().String(), "publicURL", c.PublicURL(), "dataDir", c.DataDir,
				"version", version.Get().Version, "commit", version.Get().Short())
			select {
			case err := <-errc:
				return err
			case <-ctx.Done():
			}
			if strings.Contains(context.Cause(ctx).Error(), syscall.SIGHUP.String()) {
				log.Warn("SIGHUP: mdpress does not reload its config; it stops as for SIGTERM, and a restart applies a new config")
			}
			log.Info("shutting down: draining in-flight requests", "reason", context.Cause(ctx), "timeout", c.Server.ShutdownTimeout)
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.Server.ShutdownTimeout)
			defer cancel()
			err = srv.Shutdown(sctx)
			if errors.Is(err, context.DeadlineExceeded) {
				// Conversions still running are cut; each refunds its
				// reservation on the way out, which needs the meter, so the
				// plugins stop only once the handlers have returned.
				cutRequests(api.ErrShuttingDown)
				wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
				_ = srv.Shutdown(wctx)
				wcancel()
			}
			// What is left of the drain window, if anything, goes to the
			// charges being retried, which need the meter.
			handler.DrainCharges(sctx)
			cancelRun()
			sup.Stop()
			log.Info("stopped")
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("shutdown: requests still running after %s", c.Server.ShutdownTimeout)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "", "listen address HOST:PORT (env "+config.Env.Addr+")")
	f.StringVar(&backend, "backend", "", "render backend: chrome, fpdf, auto or a render plugin's name (env "+config.Env.Backend+")")
	f.StringVar(&sink, "sink", "", "hosted-file sink: disk, s3 or a sink plugin's name (env "+config.Env.Sink+")")
	f.StringVar(&publicURL, "public-url", "", "base of hosted-file URLs (env "+config.Env.PublicURL+")")
	f.BoolVar(&devAccount, "dev-account", false, "create a development account on first start and print its API key (env MDPRESS_DEV_ACCOUNT)")
	f.StringVar(&devPlan, "dev-plan", "pro", "plan of the development account (env MDPRESS_DEV_PLAN)")
	f.StringVar(&debugAddr, "debug-addr", "", "serve Go's /debug/pprof profiles on this address, kept on loopback (env MDPRESS_DEBUG_ADDR)")
	return cmd
}

// listenError says, beside the system's reason, where the address came
// from and how to pick another: `make run` on a machine where 8080 is
// taken ended on "bind: address already in use" alone.
func listenError(addr string, err error) error {
	hint := "set another HOST:PORT"
	if errors.Is(err, syscall.EADDRINUSE) {
		hint = "another process listens there: stop it, or listen elsewhere"
	}
	return fmt.Errorf("listen on %q (server.addr, --addr, %s): %w\n%s with --addr HOST:PORT or %s (make run: %s=127.0.0.1:8081 make run)",
		addr, config.Env.Addr, err, hint, config.Env.Addr, config.Env.Addr)
}

// maxConnections is the bound of open client connections: configured,
// or api.DefaultMaxConnections, but never more than the file descriptor
// limit leaves once the host's own descriptors (plugins, logs, the
// database's and the sink's connections) have room: past it the server
// stops accepting, and the bound is there to keep it accepting.
func maxConnections(configured int, log *slog.Logger) int {
	n := configured
	if n == 0 {
		n = api.DefaultMaxConnections
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > math.MaxInt32 {
		return n
	}
	room := int(rl.Cur) - max(64, int(rl.Cur)/8)
	if n > room {
		level := slog.LevelInfo
		if configured != 0 {
			level = slog.LevelWarn
		}
		log.Log(context.Background(), level, "server.maxConnections lowered to fit the open-file limit (ulimit -n)",
			"configured", configured, "maxConnections", max(room, 1), "openFiles", rl.Cur)
		n = max(room, 1)
	}
	return n
}

func pluginMetrics(sup *supervisor.Supervisor) metrics.PluginSource {
	return func(ctx context.Context) []metrics.PluginMetrics {
		var mu sync.Mutex
		var wg sync.WaitGroup
		var out []metrics.PluginMetrics
		sup.Each(func(_, plugin string, c *sdkplugin.Client) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				text, err := c.Metrics(ctx)
				if err == nil && len(text) == 0 {
					return
				}
				mu.Lock()
				out = append(out, metrics.PluginMetrics{Plugin: plugin, Text: text, Err: err})
				mu.Unlock()
			}()
		})
		wg.Wait()
		// Where two plugins expose the same series the first keeps it:
		// the same one on every scrape.
		sort.Slice(out, func(i, j int) bool { return out[i].Plugin < out[j].Plugin })
		return out
	}
}

// serveDebug exposes the runtime profiles on a separate listener, never on
// the public port.
func serveDebug(addr string, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	log.Info("debug listener", "addr", addr)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		log.Error("debug listener", "err", err)
	}
}
