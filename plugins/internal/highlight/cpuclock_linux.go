//go:build linux

package highlight

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadClock returns a clock of the CPU time the calling goroutine's
// thread has run, and a function that releases the thread. The budget is
// counted in it rather than on the wall: a lexer descheduled on a busy
// machine spends none of it, so the same document highlights the same
// there, and it is what the budget bounds, the CPU a document costs.
func threadClock() (now func() time.Duration, release func()) {
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
