// Command render-fpdf is the mdpress render stage without a browser: it
// lays out the parsed document tree itself and draws it with fpdf and
// embedded DejaVu fonts. It is the fallback of the embedded deployment.
package main

import (
	"os"
	"runtime/debug"

	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"

	"github.com/mdpress/mdpress/plugins/render-fpdf/render"
)

func main() {
	// A render allocates far more (zlib state per stream, glyph tables)
	// than it keeps, so the default GC pace collects a small live heap over
	// and over: a quarter more throughput at GOGC=400 (plugins/bench). The
	// soft limit keeps a burst of long documents from growing without end.
	// GOGC and GOMEMLIMIT in the environment still win.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
	log := sdkplugin.Logger()
	sdkplugin.Serve(stage.NameRender, render.New(log), sdkplugin.WithGCPercent(400))
}
