//go:build !linux

package highlight

import "time"

// threadClock is the wall clock where no thread CPU clock is read.
func threadClock() (now func() time.Duration, release func()) { return wallClock() }
