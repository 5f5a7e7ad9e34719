package apikey

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
		key := issueKey(t, req)
		auth := New(log)
		t.Cleanup(func() { auth.Close() })
		plugintest.Authenticator(t, auth, plugintest.Config{Request: req}, key)
	})

	// The binary the host launches, over real go-plugin gRPC: error codes
	// must survive the trip.
	t.Run("binary", func(t *testing.T) {
		if testing.Short() {
			t.Skip("builds the plugin binary; skipped in -short mode")
		}
		bin := plugintest.Build(t, "github.com/mdpress/mdpress/plugins/auth-apikey")
		req := backends[0].req(t)
		key := issueKey(t, req)
		c := plugintest.Launch(t, bin, stage.NameAuth, plugintest.Config{Request: req})
		plugintest.Authenticator(t, c, plugintest.Config{Configured: true}, key)
	})
}

// issueKey creates an account and a key in the store req names.
func issueKey(t *testing.T, req *stage.ConfigureRequest) string {
	cli := cliStore(t, req)
	acct, err := cli.CreateAccount(t.Context(), "free", nil)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := cli.CreateKey(t.Context(), acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
