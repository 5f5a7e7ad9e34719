// Package fuzz holds the fuzz targets that cross plugins in process: the
// Markdown a client sends goes through the real parse-goldmark and
// style-themes code into render-fpdf's layout and paint, as the pipeline
// runs them, so what the fuzzer finds is what the server would meet. A
// plugin never imports another; this package, tests only, is not one.
package fuzz
