package chrome

import (
	"testing"

	"github.com/mdpress/mdpress/sdk/plugintest"
)

// TestConformance runs the SDK's renderer contract on this renderer.
func TestConformance(t *testing.T) {
	needChrome(t)
	plugintest.Lifecycle(t, New(testLog(t)))
	plugintest.Renderer(t, newRenderer(t, `{"tabs":1}`), plugintest.Config{Configured: true}, "")
}
