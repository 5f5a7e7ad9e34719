package highlight

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestBudgetCountsCPU: a block lexed while busy goroutines share the
// process's one P with it takes many times its CPU time on the wall, past
// its allowance, and is still highlighted. The allowance is counted in the
// CPU its thread used: on the wall clock, a loaded machine printed some
// blocks plain that a quiet one highlighted, and the same document's PDF
// differed from one render to the next.
func TestBudgetCountsCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the thread CPU clock is read on Linux only; elsewhere the budget is wall time")
	}
	// Enough code and busy goroutines to take the lexer past its
	// allowance on the wall, with the race detector's slower lexing and
	// longer allowance too, in a few seconds.
	copies, spinners := 200, 60
	if slowdown > 1 {
		copies, spinners = 40, 40
	}
	code := strings.Repeat("// Sum adds.\nfunc Sum(xs []int) (n int) {\n\tfor _, x := range xs {\n\t\tn += x * 42\n\t}\n\treturn n\n}\n\n", copies)
	allowance := slowdown * (blockTime + time.Duration(len(code))*blockTimePerKiB/1024)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var stop atomic.Bool
	defer stop.Store(true)
	for range spinners {
		go func() {
			for !stop.Load() { // busy: the point is to hold the P
			}
		}()
	}
	start := time.Now()
	spans := NewBudget().Spans("go", code)
	wall := time.Since(start)
	if wall <= allowance {
		t.Fatalf("lexing %d KiB took %v on the wall, within its allowance of %v: the busy goroutines did not slow it, and the test shows nothing", len(code)>>10, wall, allowance)
	}
	if spans == nil {
		t.Fatalf("lexing %d KiB took %v on the wall, past its allowance of %v, and was cut: the budget counted the wall", len(code)>>10, wall, allowance)
	}
}
