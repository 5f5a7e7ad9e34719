package bench

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

// BenchmarkFpdfTenPagesFloor: the 10-page render as one call to the
// render-fpdf plugin process, the tree already parsed (no HTTP, no host,
// no auth, meter or parse), against the same render in process: the best
// ratio any pipeline that renders in a plugin process can reach here.
func BenchmarkFpdfTenPagesFloor(b *testing.B) {
	_, r, req := tenPagesInProcess(b)
	c := plugintest.Launch(b, filepath.Join(binDir, "plugins", "render-fpdf"), stage.NameRender, plugintest.Config{})
	ctx := context.Background()
	for range 5 {
		if _, err := c.Render(ctx, req); err != nil {
			b.Fatal(err)
		}
		_, _ = r.Render(ctx, req)
	}
	var ours, theirs time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := c.Render(ctx, req); err != nil {
			b.Fatal(err)
		}
		answered := time.Now()
		time.Sleep(settle)
		mid := time.Now()
		if _, err := r.Render(ctx, req); err != nil {
			b.Fatal(err)
		}
		ours += answered.Sub(start)
		theirs += time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(ours.Seconds()*1000/n, "plugin-ms/doc")
	b.ReportMetric(theirs.Seconds()*1000/n, "inproc-ms/doc")
	b.ReportMetric(theirs.Seconds()/ours.Seconds(), "inproc/plugin")
}
