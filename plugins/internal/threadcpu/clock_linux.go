//go:build linux

package threadcpu

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Clock returns a clock of the CPU time the calling goroutine's thread has
// run, which holds the goroutine to its thread until release is called.
// Reading it is a system call (about a microsecond).
func Clock() (now func() time.Duration, release func()) {
	runtime.LockOSThread()
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		runtime.UnlockOSThread()
		return wallClock()
	}
	return func() time.Duration {
		var ts unix.Timespec
		_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
		return time.Duration(ts.Nano())
	}, runtime.UnlockOSThread
}
