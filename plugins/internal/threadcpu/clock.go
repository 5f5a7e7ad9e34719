// Package threadcpu reads the CPU time of the calling goroutine's thread,
// for budgets that bound what hostile input costs (code highlighting, math
// conversion) to count the CPU used rather than the wall clock, on which a
// loaded machine would cut ordinary work short and make the same document
// print differently from one run to the next.
package threadcpu

import "time"

// wallClock is time since its first reading, for Clock to fall back on.
func wallClock() (now func() time.Duration, release func()) {
	start := time.Now()
	return func() time.Duration { return time.Since(start) }, func() {}
}
