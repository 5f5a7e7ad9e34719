//go:build race

package highlight

// slowdown scales the time limits: the race detector makes lexing 5-20
// times slower, and a test binary built with it must print the PDFs a
// production build prints.
const slowdown = 10
