package accounts

import (
	"syscall"
	"testing"
	"time"
)

// cpuMeter reports the CPU time the whole test process spent per operation
// (every thread, the garbage collector included), which is what a plugin
// process pays per request; ns/op alone hides work done on other cores and
// counts time spent waiting for PostgreSQL. A PostgreSQL server's own CPU is
// not included: it runs in other processes.
type cpuMeter struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) cpuMeter { return cpuMeter{b, processCPU(b)} }

func (m cpuMeter) report() {
	m.b.ReportMetric(float64(processCPU(m.b)-m.start)/float64(m.b.N), "cpu-ns/op")
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
