package plugin

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mdpress/mdpress/sdk/stage"
)

// MetricsWriter is implemented by plugins that expose Prometheus families of
// their own. WriteMetrics writes them in the text exposition format; the
// host merges them into its /metrics. The SDK stays free of client_golang.
// The host leaves out, and logs once, an answer over MaxMetricsBytes (w
// fails every write past it, ErrMetricsTooLarge: stop there), one that
// takes over 2 s, and a family with a series name the host or an
// earlier plugin already writes (go_*, process_* among them).
type MetricsWriter interface {
	WriteMetrics(w io.Writer) error
}

// ServeOption adjusts Serve.
type ServeOption func(*serveConfig)

type serveConfig struct{ gcPercent int }

// WithGCPercent sets the garbage collector's pace (see runtime/debug), for
// plugins whose allocation pattern wants another than the default.
func WithGCPercent(p int) ServeOption { return func(c *serveConfig) { c.gcPercent = p } }

// DefaultGCPercent is the GC pace Serve sets unless GOGC is in the
// environment. A stage call allocates messages many times the size of a
// plugin's small live heap, so Go's default of 100 collects several times
// per request; 300 cut the plugins' CPU per conversion by about a tenth
// (plugins/bench) for a few MiB more heap per process. The host keeps Go's
// default: it streams hosted files, where a slower pace would hold more
// spent chunks.
const DefaultGCPercent = 300

// Serve runs impl as the plugin for the named stage and returns when the
// host shuts the plugin down; impl is closed before Serve returns. impl must
// implement the stage's interface (stage.Renderer for stage.NameRender, ...).
func Serve(stageName string, impl stage.Plugin, opts ...ServeOption) {
	if err := checkImpl(stageName, impl); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cfg := serveConfig{gcPercent: DefaultGCPercent}
	for _, o := range opts {
		o(&cfg)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(cfg.gcPercent)
	}
	stop := make(chan struct{})
	defer close(stop)
	go exitWithParent(impl, stop)

	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         map[string]goplugin.Plugin{stageName: &grpcPlugin{stage: stageName, impl: impl}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			// Calls run on long-lived workers rather than a new goroutine
			// each, whose stack would grow again on every call: the stages'
			// code runs deep (SQLite, goldmark, fpdf). A busy pool starts a
			// goroutine as before, so no call waits for another.
			opts = append(opts, grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes),
				grpc.NumStreamWorkers(uint32(max(4, runtime.GOMAXPROCS(0)))),
				grpc.InitialWindowSize(WindowBytes), grpc.InitialConnWindowSize(WindowBytes),
				grpc.ChainUnaryInterceptor(requestIDUnary, recoverUnary), grpc.ChainStreamInterceptor(requestIDStream, recoverStream))
			return grpc.NewServer(opts...)
		},
	})
	_ = impl.Close()
}

// A panic in a call fails that call alone. Left to crash the process, one
// document that trips a bug would fail every call in flight on the plugin
// (other users' renders) and cost a relaunch (a browser start).
func recoverUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	defer recovered(ctx, info.FullMethod, &err)
	return handler(ctx, req)
}

func recoverStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	defer recovered(ss.Context(), info.FullMethod, &err)
	return handler(srv, ss)
}

// recovered turns a panic into an internal error of the call, logged with
// its stack here; the host sees an internal failure, as for any other bug.
func recovered(ctx context.Context, method string, err *error) {
	p := recover()
	if p == nil {
		return
	}
	causeLog().ErrorContext(ctx, "panic in a call: the call fails, the plugin serves on", "method", method,
		"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	*err = status.Error(codes.Internal, "internal error")
}

// exitWithParent closes impl and exits when the host goes away without
// shutting the plugin down (SIGKILL of the host), so no plugin and none of
// its children (a browser) outlive it. The host also starts plugins with a
// parent-death SIGTERM; polling the parent covers platforms without it.
func exitWithParent(impl stage.Plugin, stop <-chan struct{}) {
	parent := os.Getppid()
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-term:
		case <-tick.C:
			if os.Getppid() == parent {
				continue
			}
		}
		_ = impl.Close()
		os.Exit(0)
	}
}

func checkImpl(stageName string, impl stage.Plugin) error {
	var ok bool
	switch stageName {
	case stage.NameAuth:
		_, ok = impl.(stage.Authenticator)
	case stage.NameMeter:
		_, ok = impl.(stage.Meter)
	case stage.NameParse:
		_, ok = impl.(stage.Parser)
	case stage.NameStyle:
		_, ok = impl.(stage.Styler)
	case stage.NameRender:
		_, ok = impl.(stage.Renderer)
	case stage.NameSink:
		_, ok = impl.(stage.Sink)
	default:
		return fmt.Errorf("mdpress plugin: unknown stage %q", stageName)
	}
	if !ok {
		return fmt.Errorf("mdpress plugin: %T does not implement the %s stage interface", impl, stageName)
	}
	return nil
}

// LogLevelEnv names the variable through which the host tells a plugin its
// log level, so that a plugin does not encode and pipe lines the host would
// drop.
const LogLevelEnv = "MDPRESS_PLUGIN_LOG_LEVEL"

// Logger returns a logger that writes JSON lines to stderr in the shape
// go-plugin's host side reads (@level, @message, @timestamp), so the host
// re-levels plugin logs into its own, adding the plugin's name as
// "plugin" (an attribute of that key is dropped). Its level is the host's
// (debug when run outside a host). Never log to stdout: it carries the
// handshake. A line written with a stage call's context (InfoContext)
// carries the id of the HTTP request the call serves, as "requestId".
func Logger() *slog.Logger {
	level := slog.LevelDebug
	if v := os.Getenv(LogLevelEnv); v != "" {
		_ = level.UnmarshalText([]byte(v))
	}
	return NewLogger(processStderr, level)
}

// processStderr is the process's stderr as it was at start. go-plugin's
// Serve points os.Stderr at a pipe that only a host asking for the
// plugin's stdio reads, and this host does not: a logger made after Serve
// began (the SDK's own, made at a stage call's first failure, or a
// plugin's made lazily) wrote its lines there, and they were lost, such as
// sink-disk's "no space left on device" behind a bare 500.
var processStderr = os.Stderr

// NewLogger is Logger writing to w at the given minimum level.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(requestIDHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) > 0 {
				return a
			}
			switch a.Key {
			case slog.TimeKey:
				return slog.String("@timestamp", a.Value.Time().UTC().Format("2006-01-02T15:04:05.000000Z07:00"))
			case slog.LevelKey:
				return slog.String("@level", hclogLevel(a.Value.Any().(slog.Level)))
			case slog.MessageKey:
				return slog.String("@message", a.Value.String())
			}
			return a
		},
	})})
}

func hclogLevel(l slog.Level) string {
	switch {
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	default:
		return "error"
	}
}

// grpcPlugin is the go-plugin glue for one stage; impl is set on the plugin
// side only.
type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	stage string
	impl  stage.Plugin
}

func (p *grpcPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	if err := checkImpl(p.stage, p.impl); err != nil {
		return err
	}
	registerServers(s, p.stage, p.impl)
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return newClient(p.stage, conn), nil
}
