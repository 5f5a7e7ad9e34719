package disk

import (
	"io"
	"log/slog"
	"testing"

	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

func TestConformance(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	t.Run("lifecycle", func(t *testing.T) { plugintest.Lifecycle(t, New(log)) })

	t.Run("in process", func(t *testing.T) {
		d := New(log)
		t.Cleanup(func() { d.Close() })
		plugintest.Sink(t, d, plugintest.Config{})
	})

	// The binary the host launches, over real go-plugin gRPC: ranges, error
	// codes and streamed bodies must survive the trip.
	t.Run("binary", func(t *testing.T) {
		if testing.Short() {
			t.Skip("builds the plugin binary; skipped in -short mode")
		}
		bin := plugintest.Build(t, "github.com/mdpress/mdpress/plugins/sink-disk")
		c := plugintest.Launch(t, bin, stage.NameSink, plugintest.Config{})
		plugintest.Sink(t, c, plugintest.Config{Configured: true})
	})
}
