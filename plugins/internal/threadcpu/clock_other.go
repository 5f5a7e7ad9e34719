//go:build !linux

package threadcpu

import "time"

// Clock is the wall clock where no thread CPU clock is read.
func Clock() (now func() time.Duration, release func()) { return wallClock() }
