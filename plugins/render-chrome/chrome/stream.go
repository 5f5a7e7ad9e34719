package chrome

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdpio "github.com/chromedp/cdproto/io"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mdpress/mdpress/sdk/stage"
)

// errPDFTooLarge marks a printed PDF past maxPDFBytes. Unlike a document
// refused before printing, the tab printed it and is not reused: its
// renderer holds what it took to print.
var errPDFTooLarge = errors.New("printed PDF too large")

// readChunk is how much of the PDF one IO.read asks for.
const readChunk = 4 << 20

// printPDF prints the tab's document and reads the PDF from the browser's
// stream, giving up once it passes maxBytes. A few hundred bytes of CSS
// (an SVG noise filter on every page, which Chromium rasterises at 300 dpi
// into the PDF) print to 30 MB a page: read whole, such a PDF would sit
// in this plugin's memory and then the host's, and reach the client,
// however large.
func printPDF(ctx context.Context, target *chromedp.Target, params chromedp.PDFOption, maxBytes int64) ([]byte, error) {
	var p page.PrintToPDFParams
	params(&p)
	res, err := cdp.Call(ctx, target, page.PrintToPDF, p)
	if err != nil {
		return nil, err
	}
	// The browser keeps an open stream until the tab closes; it is closed
	// also when the render ran out of time.
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_, _ = cdp.Call(cctx, target, cdpio.Close, cdpio.CloseParams{Handle: res.Stream})
	}()
	var buf bytes.Buffer
	for {
		// Chunks of a bounded size: left to the browser, one read may
		// carry the whole PDF, bound or not.
		chunk, err := cdp.Call(ctx, target, cdpio.Read, cdpio.ReadParams{Handle: res.Stream, Size: readChunk})
		if err != nil {
			return nil, fmt.Errorf("read the PDF stream: %w", err)
		}
		if int64(buf.Len())+int64(len(chunk.Data)) > maxBytes {
			limit := formatBytes(maxBytes)
			se := stage.Wrap(stage.CodeTooLarge, errPDFTooLarge, "the PDF is larger than the limit of "+limit)
			// "size" is the contract's field of a 413 for a PDF too large:
			// how big, and the limit. How much bigger is not known: the
			// rest was never read.
			se.Details = map[string]string{"limit": limit, "size": "more than " + limit + " (limit " + limit + ")"}
			return nil, se
		}
		buf.Write(chunk.Data)
		if chunk.EOF {
			return buf.Bytes(), nil
		}
	}
}

// formatBytes says n in the largest binary unit that divides it, or in
// bytes.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
