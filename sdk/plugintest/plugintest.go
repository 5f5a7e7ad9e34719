// Package plugintest is the conformance kit for stage plugins. It runs an
// implementation, in process or as a built binary over real go-plugin gRPC,
// through its stage's contract: the shapes of answers, the error codes, the
// lifecycle rules. It needs nothing of the host.
//
//	func TestConformance(t *testing.T) {
//	    plugintest.Renderer(t, myrenderer.New(log), plugintest.Config{JSON: `{}`}, "")
//	}
//
// or, against the binary a host would launch:
//
//	c := plugintest.Launch(t, "bin/plugins/render-fpdf", stage.NameRender, cfg)
//	plugintest.Renderer(t, c, plugintest.Config{Configured: true}, "")
package plugintest

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Config says how to configure the plugin under test.
type Config struct {
	// JSON is the plugin's config block; "" means {}.
	JSON string
	// Request overrides the whole configure request (DataDir, Plans, ...);
	// JSON still sets its Config when Request.Config is nil.
	Request *stage.ConfigureRequest
	// Configured means the caller already configured the plugin (Launch
	// does), so the kit does not call Configure again.
	Configured bool
}

func (c Config) request(t testing.TB) *stage.ConfigureRequest {
	req := &stage.ConfigureRequest{DataDir: t.TempDir(), PublicURL: "http://127.0.0.1:1"}
	if c.Request != nil {
		r := *c.Request
		req = &r
	}
	if req.Config == nil {
		req.Config = []byte(c.JSON)
		if c.JSON == "" {
			req.Config = []byte("{}")
		}
	}
	return req
}

// Launch starts a plugin binary as the host would (its own process group,
// handshake, raised message limits), configures it and returns its client.
// The process is killed when the test ends.
func Launch(t testing.TB, path, stageName string, cfg Config) *sdkplugin.Client {
	t.Helper()
	cmd := exec.Command(path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  sdkplugin.Handshake,
		Plugins:          sdkplugin.Map(stageName),
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		GRPCDialOptions:  sdkplugin.DialOptions(),
		StartTimeout:     15 * time.Second,
		Logger:           testLogger(t),
	})
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	raw, err := rpc.Dispense(stageName)
	if err != nil {
		t.Fatalf("dispense %s: %v", stageName, err)
	}
	c := raw.(*sdkplugin.Client)
	configure(t, c, cfg)
	return c
}

// testLogger sends go-plugin's log and the plugin's stderr to the test's
// log, which shows them for a failing test (or -v) and keeps them out of
// passing tests' output. A benchmark's log is always printed, so there only
// warnings and errors go. Lines after the test are dropped.
func testLogger(t testing.TB) hclog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(w.close) // registered before client.Kill, so it runs after it
	level := hclog.Debug
	if _, ok := t.(*testing.B); ok {
		level = hclog.Warn
	}
	return hclog.New(&hclog.LoggerOptions{Name: "plugin", Output: w, Level: level})
}

type testWriter struct {
	mu     sync.Mutex
	t      testing.TB
	closed bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}

func configure(t testing.TB, p stage.Plugin, cfg Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.Configure(ctx, cfg.request(t)); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	if err := p.Health(ctx); err != nil {
		t.Fatalf("Health after Configure: %v", err)
	}
}

// Lifecycle checks the base contract on a fresh, unconfigured plugin: a
// config block with an unknown key is rejected as invalid (naming the
// key), and Close is safe twice, also after a failed Configure.
func Lifecycle(t *testing.T, p stage.Plugin) {
	t.Helper()
	t.Run("unknown config key is invalid", func(t *testing.T) {
		_, err := p.Configure(context.Background(), &stage.ConfigureRequest{
			Config: []byte(`{"noSuchKeyForConformance": true}`), DataDir: t.TempDir(),
		})
		if stage.CodeOf(err) != stage.CodeInvalid {
			t.Fatalf("Configure with an unknown key: %v, want a CodeInvalid error", err)
		}
		var se *stage.Error
		if errors.As(err, &se) && !contains(se.Message, "noSuchKeyForConformance") {
			t.Errorf("the error %q should name the key", se.Message)
		}
	})
	t.Run("close twice", func(t *testing.T) {
		if err := p.Close(); err != nil {
			t.Fatalf("first Close: %v", err)
		}
		if err := p.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
