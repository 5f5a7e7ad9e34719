package plugintest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Drive runs op b.N times in all, from clients goroutines at once: a
// launched plugin under concurrent load, as the host puts it.
func Drive(b *testing.B, clients int, op func() error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range clients {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := op(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// Batch runs jobs calls of job from clients goroutines at once and
// returns how long they took together: one round of a throughput
// comparison, where contenders take turns on the same batch size so that
// a noisy machine hits each alike.
func Batch(tb testing.TB, clients, jobs int, job func() error) time.Duration {
	tb.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for next.Add(1) <= int64(jobs) {
				if err := job(); err != nil {
					tb.Error(err)
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// ProcessCPU finds the process this test launched from the binary bin and
// returns a reader of the CPU time it has used so far, every thread
// included: what a call costs the plugin, which ns/op of the caller does
// not show. /proc counts in ticks of 10 ms, so run enough iterations
// (-benchtime 2000x) for a few percent of precision. It skips where /proc
// is missing.
func ProcessCPU(tb testing.TB, bin string) func() time.Duration {
	tb.Helper()
	pid := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, exe := range procs {
		if target, err := os.Readlink(exe); err == nil && target == bin {
			pid, _ = strconv.Atoi(filepath.Base(filepath.Dir(exe)))
			break
		}
	}
	if pid == 0 {
		tb.Skip("cannot find the plugin process in /proc")
	}
	return func() time.Duration {
		st, err := ReadProcStat(pid)
		if err != nil {
			tb.Fatal(err)
		}
		return st.CPU
	}
}

// ProcStat is what /proc/PID/stat says of a process.
type ProcStat struct {
	Name string        // the command name, at most 15 bytes
	PPid int           // the parent's pid
	CPU  time.Duration // user and system time so far, every thread, in 10 ms ticks
}

// ReadProcStat reads /proc/PID/stat.
func ReadProcStat(pid int) (ProcStat, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ProcStat{}, err
	}
	// The name is in parentheses and may hold spaces: fields count from
	// the last ')'. After it: state, ppid, ...; utime and stime are the
	// 14th and 15th fields of the whole line.
	open, end := strings.IndexByte(string(raw), '('), strings.LastIndexByte(string(raw), ')')
	f := strings.Fields(string(raw[end+1:]))
	if open < 0 || end < open || len(f) < 13 {
		return ProcStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	ppid, _ := strconv.Atoi(f[1])
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return ProcStat{Name: string(raw[open+1 : end]), PPid: ppid, CPU: time.Duration(utime+stime) * 10 * time.Millisecond}, nil
}

// SamplePeakHeap records in *peak the largest live heap (bytes of heap
// objects) this process holds until the returned stop is called, sampled
// every millisecond: what a memory bound of a stage's work is tested
// against.
func SamplePeakHeap(peak *int) (stop func()) {
	var done atomic.Bool
	finished := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(finished)
		for !done.Load() {
			metrics.Read(sample)
			*peak = max(*peak, int(sample[0].Value.Uint64()))
			time.Sleep(time.Millisecond)
		}
	}()
	return func() { done.Store(true); <-finished }
}
