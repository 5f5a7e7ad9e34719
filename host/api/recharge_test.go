package api

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/pipeline"
	"github.com/mdpress/mdpress/sdk/stage"
)

var errStoreDown = stage.Errorf(stage.CodeUnavailable, "the account store is unavailable")

func testRecharges(max int) *recharges {
	rc := newRecharges(slog.New(slog.NewTextHandler(io.Discard, nil)))
	rc.max, rc.first, rc.maxWait, rc.giveUp = max, time.Millisecond, 4*time.Millisecond, 50*time.Millisecond
	return rc
}

// TestRechargeRetries: a charge that fails while the store is down is made
// once it answers again; one that keeps failing, or fails for good, or
// comes too late, is given up.
func TestRechargeRetries(t *testing.T) {
	tests := []struct {
		name        string
		first       error
		answers     func(attempt int32) error
		scheduled   bool
		wantCharged bool
		maxAttempts int32 // 0: any
	}{
		{name: "store back", first: errStoreDown, scheduled: true, wantCharged: true,
			answers: func(n int32) error {
				if n < 3 {
					return errStoreDown
				}
				return nil
			}},
		{name: "store stays down", first: errStoreDown, scheduled: true,
			answers: func(int32) error { return errStoreDown }, maxAttempts: 20},
		{name: "reservation unknown", first: stage.Errorf(stage.CodeNotFound, "reservation not found"), scheduled: false,
			answers: func(int32) error { return nil }, maxAttempts: 0},
		{name: "too late", first: errStoreDown, scheduled: true,
			answers: func(int32) error { return pipeline.ErrTooLate }, maxAttempts: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc := testRecharges(4)
			var attempts atomic.Int32
			charged := make(chan struct{}, 1)
			charge := func(context.Context) error { return tc.answers(attempts.Add(1)) }
			if got := rc.retry("req", charge, tc.first, func() { charged <- struct{}{} }); got != tc.scheduled {
				t.Fatalf("retry scheduled %v, want %v", got, tc.scheduled)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if n := rc.drain(ctx); n != 0 {
				t.Fatalf("%d retries still pending after 5 s", n)
			}
			select {
			case <-charged:
				if !tc.wantCharged {
					t.Fatal("charged")
				}
			default:
				if tc.wantCharged {
					t.Fatalf("not charged after %d attempts", attempts.Load())
				}
			}
			if tc.maxAttempts > 0 && attempts.Load() > tc.maxAttempts {
				t.Fatalf("%d attempts, want at most %d", attempts.Load(), tc.maxAttempts)
			}
			if !tc.scheduled && attempts.Load() != 0 {
				t.Fatalf("%d attempts of a charge given up at once", attempts.Load())
			}
		})
	}
}

// TestRechargeBound: an outage fills the retries up to the bound, and
// failures past it are given up rather than piling up goroutines; a
// shutdown abandons those pending once the drain window is over, counts
// them, and gives up later failures.
func TestRechargeBound(t *testing.T) {
	rc := testRecharges(3)
	rc.giveUp = time.Hour
	down := func(context.Context) error { return errStoreDown }
	for i := range 3 {
		if !rc.retry("req", down, errStoreDown, func() {}) {
			t.Fatalf("retry %d refused under the bound", i)
		}
	}
	if rc.retry("req", down, errStoreDown, func() {}) {
		t.Fatal("a fourth retry was taken past the bound of 3")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if n := rc.drain(ctx); n != 3 {
		t.Fatalf("drain abandoned %d, want 3", n)
	}
	if rc.retry("req", down, errStoreDown, func() {}) {
		t.Fatal("a retry was taken after the shutdown abandoned them")
	}
	// The abandoned goroutines end without another charge.
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		rc.mu.Lock()
		n := rc.pending
		rc.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("%d retries still running after they were abandoned", n)
		}
	}
}
