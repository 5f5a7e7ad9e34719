package highlight

import (
	"reflect"
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

// TestMatchStalled: blocks of long comments, lexed while busy goroutines
// hold the process's one P, are stalled for longer than chroma's 250 ms
// bound (and less than matchTimeout) in the middle of a comment's match,
// and still come out as they do on a quiet machine. With chroma's bound
// the match was cut, the lexer tried its next rules, and the comment came
// out in other colours.
func TestMatchStalled(t *testing.T) {
	code := strings.Repeat("/* "+strings.Repeat("word ", 400)+"*/\na { color: red }\n", 30)
	want := NewBudget().Spans("scss", code)
	if want == nil {
		t.Fatal("the block was not highlighted on a quiet machine")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var stop atomic.Bool
	defer stop.Store(true)
	// The scheduler takes the P from the lexer after 10 ms of running,
	// most likely in a comment's match, and each busy goroutine keeps it
	// for 10-20 ms: about half a second in all.
	for range 25 {
		go func() {
			for !stop.Load() { // busy: the point is to hold the P
			}
		}()
	}
	stalls, differ := 0, 0
	for start := time.Now(); stalls < 8 && time.Since(start) < 20*time.Second; {
		t0 := time.Now()
		got := NewBudget().Spans("scss", code)
		if d := time.Since(t0); d > 400*time.Millisecond && d < matchTimeout-200*time.Millisecond {
			stalls++
		}
		if !reflect.DeepEqual(got, want) {
			differ++
		}
	}
	if differ > 0 {
		t.Errorf("%d blocks of those stalled %d times came out otherwise than on a quiet machine", differ, stalls)
	}
	if stalls == 0 {
		// A machine loaded enough stretches every lexing past the
		// window; the test then shows nothing, and says so.
		t.Skip("no lexing was stalled past chroma's bound and within matchTimeout in 20 s")
	}
}
