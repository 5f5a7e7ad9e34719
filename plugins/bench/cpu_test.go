package bench

import (
	"runtime"
	"syscall"
	"time"
)

func runtimeCPUs() int { return runtime.NumCPU() }

// selfCPU is the CPU time this process has used, all threads, at the
// scheduler's resolution (not the 10 ms ticks of /proc/<pid>/stat), so a
// stretch of one request's work can be taken apart from the next.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
