// Package bench holds the end-to-end benchmarks that `make bench` prints:
// the real mdpress binary over all six plugin processes, measured against a
// baseline in the same run and interleaved with it, so the noise of a shared
// machine hits both alike. Figures are ratios:
//
//   - chrome, 1 page, one client: end-to-end vs bare chromedp printToPDF on a warm tab
//   - chrome, 4 clients: end-to-end throughput vs bare chromedp with the same tab count,
//     and vs a browser process per document
//   - fpdf, 10 pages: end-to-end vs the layout code called in process, one client
//     (latency, with the host's mean time per stage call, the CPU each process
//     spends per document, and the ratio a perfect schedule of that CPU over
//     the cores would give) and four (throughput);
//     beside it the same layout as one call to the render-fpdf process, the
//     ceiling of that ratio for any pipeline that renders in a plugin; and the
//     host's pipeline code over the parse, style and render processes with no
//     HTTP, key check or credits, the share of the document's own stages
//   - a plugin hop: the cheapest stage call right after the last one, and after
//     5 ms of other work, which is what each hop of a conversion pays; beside
//     it the same round trips over a bare Unix socket, the machine's floor
//   - fpdf vs chrome, 1 page, 4 clients: end-to-end throughput of each
//   - the corpus's small, medium and large documents, one client: end to end on
//     each backend vs md-to-pdf (npm) on a warm browser (make bench-deps)
//
// It needs the binaries (MDPRESS_BIN_DIR=bin, as `make bench` sets, or it
// builds them) and, for the chrome figures, Debian's chromium.
package bench
