package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/core/pipeline"
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
	againstInProcess(b, "plugin", func() error { _, err := c.Render(ctx, req); return err },
		func() error { _, err := r.Render(ctx, req); return err })
}

// BenchmarkFpdfTenPagesStages: the 10-page conversion through the host's
// pipeline code with parse-goldmark, style-themes and render-fpdf as plugin
// processes, as the host runs them, but with no HTTP, no key check and no
// credits (the pipeline of `mdpress render`), against the layout called in
// process. Between the floor (the render alone as a plugin call) and end to
// end (BenchmarkFpdfTenPages), it says how much of the gap the document's
// own stages make and how much the request around them does.
func BenchmarkFpdfTenPagesStages(b *testing.B) {
	md, r, req := tenPagesInProcess(b)
	ctx := context.Background()
	info, err := r.Configure(ctx, &stage.ConfigureRequest{Config: []byte("{}")})
	if err != nil {
		b.Fatal(err)
	}
	parser := plugintest.Launch(b, filepath.Join(binDir, "plugins", "parse-goldmark"), stage.NameParse, plugintest.Config{})
	parser.RelayTrees() // as the host's supervisor sets it
	st := pipeline.Stages{
		Parser:       parser,
		Styler:       plugintest.Launch(b, filepath.Join(binDir, "plugins", "style-themes"), stage.NameStyle, plugintest.Config{}),
		Renderer:     plugintest.Launch(b, filepath.Join(binDir, "plugins", "render-fpdf"), stage.NameRender, plugintest.Config{}),
		RendererCaps: info.Info.Capabilities,
	}
	if !slices.Contains(st.RendererCaps, stage.CapReadsTreeParts) {
		b.Fatalf("render-fpdf declares %v, not reading the tree in parts", st.RendererCaps)
	}
	a4, _ := papers.Lookup("A4")
	job := pipeline.Job{Markdown: md, Theme: "modern", Page: a4, Numbering: stage.NumberingCenter}
	p := pipeline.New(nil)
	run := func() error {
		res, err := p.Run(ctx, st, job)
		if err == nil && res.Pages != 10 {
			err = fmt.Errorf("%d pages, want 10", res.Pages)
		}
		return err
	}
	for range 5 {
		if err := run(); err != nil {
			b.Fatal(err)
		}
		_, _ = r.Render(ctx, req)
	}
	againstInProcess(b, "stages", run, func() error { _, err := r.Render(ctx, req); return err })
}

// againstInProcess times ours and the layout in process (theirs) in turns,
// a pause between them, and reports the mean of each and theirs/ours as
// the ratio against name ("inproc/plugin").
func againstInProcess(b *testing.B, name string, ours, theirs func() error) {
	b.Helper()
	var o, t time.Duration
	for b.Loop() {
		start := time.Now()
		if err := ours(); err != nil {
			b.Fatal(err)
		}
		answered := time.Now()
		time.Sleep(settle)
		mid := time.Now()
		if err := theirs(); err != nil {
			b.Fatal(err)
		}
		o += answered.Sub(start)
		t += time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(o.Seconds()*1000/n, name+"-ms/doc")
	b.ReportMetric(t.Seconds()*1000/n, "inproc-ms/doc")
	b.ReportMetric(t.Seconds()/o.Seconds(), "inproc/"+name)
}
