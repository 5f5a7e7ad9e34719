package bucket

import (
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

func TestConformance(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	t.Run("lifecycle", func(t *testing.T) { plugintest.Lifecycle(t, New(log)) })

	for _, delivery := range []string{DeliveryPresign, DeliveryProxy} {
		t.Run("in process "+delivery, func(t *testing.T) {
			s := New(log, WithGetenv(noEnv))
			t.Cleanup(func() { s.Close() })
			plugintest.Sink(t, s, plugintest.Config{JSON: configJSON(t, map[string]any{"delivery": delivery})})
		})
	}

	// The binary the host launches, over real go-plugin gRPC.
	t.Run("binary", func(t *testing.T) {
		if testing.Short() {
			t.Skip("builds the plugin binary; skipped in -short mode")
		}
		// The binary reads the real environment. Keys there win over the
		// config's, so give it the server's keys that way: a developer's
		// own AWS keys cannot leak in, and the environment path is tested.
		block := s3Config(t, map[string]any{"delivery": DeliveryProxy})
		t.Setenv("AWS_ACCESS_KEY_ID", block["accessKeyID"].(string))
		t.Setenv("AWS_SECRET_ACCESS_KEY", block["secretAccessKey"].(string))
		t.Setenv("AWS_SESSION_TOKEN", "")
		block["accessKeyID"], block["secretAccessKey"] = "not-these", "not-these"
		raw, err := json.Marshal(block)
		if err != nil {
			t.Fatal(err)
		}
		cfg := plugintest.Config{JSON: string(raw)}
		bin := plugintest.Build(t, "github.com/mdpress/mdpress/plugins/sink-s3")
		c := plugintest.Launch(t, bin, stage.NameSink, cfg)
		plugintest.Sink(t, c, plugintest.Config{Configured: true})
	})
}

func configJSON(t *testing.T, extra map[string]any) string {
	t.Helper()
	b, err := json.Marshal(s3Config(t, extra))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
