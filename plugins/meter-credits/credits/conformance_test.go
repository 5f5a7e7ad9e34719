package credits

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
		req := backends[0].req(t)
		acct := newAccount(t, cliStore(t, req), "free", 3)
		m := New(log)
		t.Cleanup(func() { m.Close() })
		plugintest.Meter(t, m, plugintest.Config{Request: req}, acct.ID, 3)
	})

	// The binary the host launches, over real go-plugin gRPC: error codes
	// must survive the trip.
	t.Run("binary", func(t *testing.T) {
		if testing.Short() {
			t.Skip("builds the plugin binary; skipped in -short mode")
		}
		bin := plugintest.Build(t, "github.com/mdpress/mdpress/plugins/meter-credits")
		req := backends[0].req(t)
		acct := newAccount(t, cliStore(t, req), "free", 3)
		c := plugintest.Launch(t, bin, stage.NameMeter, plugintest.Config{Request: req})
		plugintest.Meter(t, c, plugintest.Config{Configured: true}, acct.ID, 3)
	})
}
