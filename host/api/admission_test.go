package api

import (
	"context"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

func TestAdmission(t *testing.T) {
	a := newAdmission(2, 1)
	ctx := context.Background()
	r1, err1 := a.enter(ctx)
	r2, err2 := a.enter(ctx)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	waited := make(chan error, 1)
	go func() {
		r, err := a.enter(ctx) // queues
		if err == nil {
			r()
		}
		waited <- err
	}()
	for a.waiting.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	if _, err := a.enter(ctx); stage.CodeOf(err) != stage.CodeBusy {
		t.Fatalf("queue full: %v, want busy", err)
	}
	r1()
	if err := <-waited; err != nil {
		t.Fatalf("queued request: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	r3, _ := a.enter(ctx)
	go cancel()
	if _, err := a.enter(cctx); err == nil {
		t.Fatal("a canceled waiter must leave the queue")
	}
	r2()
	r3()
	if a.waiting.Load() != 0 || len(a.slots) != 0 {
		t.Fatalf("leaked: waiting %d, slots %d", a.waiting.Load(), len(a.slots))
	}
}
