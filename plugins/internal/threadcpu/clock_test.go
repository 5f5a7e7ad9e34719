package threadcpu

import (
	"runtime"
	"testing"
	"time"
)

// TestClockCountsCPU: the clock stands still while its thread sleeps and
// runs while it computes.
func TestClockCountsCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the thread CPU clock is read on Linux only")
	}
	now, release := Clock()
	defer release()
	start := now()
	time.Sleep(100 * time.Millisecond)
	if slept := now() - start; slept > 20*time.Millisecond {
		t.Errorf("%v counted over a 100 ms sleep, want next to nothing", slept)
	}
	from, wall := now(), time.Now()
	for now()-from < 20*time.Millisecond {
		if time.Since(wall) > 10*time.Second {
			t.Fatal("20 ms of computing not counted in 10 s")
		}
	}
}
