package markdown

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestMathBudgetCountsCPU: formulas converted while busy goroutines share
// the process's one P take many times their CPU time on the wall, and the
// document's math budget is charged the CPU: on the wall clock a loaded
// machine printed formulas as source that a quiet one converted.
func TestMathBudgetCountsCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the thread CPU clock is read on Linux only; elsewhere the budget is wall time")
	}
	tex := []byte(`\begin{pmatrix}` + strings.Repeat(`\frac{a_1}{b^2} & \sqrt{x+y} \\ `, 8) + `\end{pmatrix}`)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var stop atomic.Bool
	defer stop.Store(true)
	for range 40 {
		go func() {
			for !stop.Load() { // busy: the point is to hold the P
			}
		}()
	}
	b := newMathBudget(context.Background())
	start := time.Now()
	for time.Since(start) < 300*time.Millisecond {
		if _, _, ok := toMathML(tex, true, b); !ok {
			t.Fatal("not converted")
		}
	}
	wall, charged := time.Since(start), maxDocMathTime-b.time
	if charged > wall/2 {
		t.Errorf("%v charged for %v on the wall: the budget counts the wall clock, not the CPU the conversions used", charged, wall)
	}
}
