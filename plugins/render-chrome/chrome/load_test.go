package chrome

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"iter"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/sdk/stage"
)

// TestWaitsForImageTheGateHasNotCounted: a document set on a tab is
// complete at once, its images still loading, and the gate counts a remote
// fetch only once the paused request's event has reached it. On a loaded
// machine the document was found loaded first and went on to print, which
// waited for the image: measured for its tables without the image, and
// taken by the memory watchdog for printing, it was blamed for a
// neighbour's memory in place of the renders printing
// (TestMemoryWatchdogRetriesNeighbours failed so). Here no gate counts the
// request at all: the test answers it, late.
func TestWaitsForImageTheGateHasNotCounted(t *testing.T) {
	t.Parallel()
	needTool(t, "pdftoppm")
	r := newRenderer(t, `{"tabs":1}`)
	p := currentProc(t, r)
	tctx, closeTab := chromedp.NewContext(p.ctx)
	defer closeTab()
	if err := chromedp.Do(tctx); err != nil {
		t.Fatal(err)
	}
	tb := &tab{ctx: tctx, cancel: closeTab, target: chromedp.FromContext(tctx).Target}
	tree, err := cdp.Call(tctx, tb.target, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	tb.frame = tree.FrameTree.Frame.ID
	next, stop := iter.Pull2(cdp.Events(tctx, tb.target, fetch.RequestPaused))
	defer stop()
	if _, err := cdp.Call(tctx, tb.target, fetch.Enable, fetch.EnableParams{
		Patterns: []*fetch.RequestPattern{{URLPattern: "http://*"}},
	}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a4, _ := papers.Lookup("A4")
	printed := make(chan result, 1)
	go func() {
		pdf, err := tb.render(ctx, doc{body: `<img src="http://public.test/red.png" width="300" height="300">`}.html(), a4, 10, 1<<30)
		printed <- result{res: &stage.RenderResponse{PDF: pdf}, err: err}
	}()
	ev, err, ok := next()
	if !ok || err != nil {
		t.Fatalf("no paused request: %v", err)
	}
	select {
	case got := <-printed:
		t.Fatalf("printed with its image still loading (err %v)", got.err)
	case <-time.After(time.Second):
	}
	if tb.printAt.Load() != 0 {
		t.Fatal("taken for printing with its image still loading")
	}
	if _, err := cdp.Call(tctx, tb.target, fetch.FulfillRequest, fetch.FulfillRequestParams{
		RequestID:       ev.RequestID,
		ResponseCode:    200,
		ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: "image/png"}},
		Body:            redPNG(t),
	}); err != nil {
		t.Fatal(err)
	}
	got := <-printed
	if got.err != nil {
		t.Fatalf("render: %v", got.err)
	}
	if n := countPixels(t, got.res.PDF, isRed); n == 0 {
		t.Error("the image is not in the PDF")
	}
}

// redPNG is a small image of solid red.
func redPNG(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{R: 255, A: 255}}, image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
