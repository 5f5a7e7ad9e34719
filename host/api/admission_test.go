package api

import (
	"context"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

func TestAdmission(t *testing.T) {
	a := newAdmission(2, 2, 1)
	ctx := context.Background()
	r1, err1 := a.enter(ctx, "k")
	r2, err2 := a.enter(ctx, "k")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	waited := make(chan error, 1)
	go func() {
		r, err := a.enter(ctx, "k") // queues
		if err == nil {
			r()
		}
		waited <- err
	}()
	for a.waiting.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	if _, err := a.enter(ctx, "k"); stage.CodeOf(err) != stage.CodeBusy {
		t.Fatalf("queue full: %v, want busy", err)
	}
	r1()
	if err := <-waited; err != nil {
		t.Fatalf("queued request: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	r3, _ := a.enter(ctx, "k")
	go cancel()
	if _, err := a.enter(cctx, "k"); err == nil {
		t.Fatal("a canceled waiter must leave the queue")
	}
	r2()
	r3()
	if a.waiting.Load() != 0 || len(a.slots) != 0 || len(a.keys) != 0 {
		t.Fatalf("leaked: waiting %d, slots %d, keys %d", a.waiting.Load(), len(a.slots), len(a.keys))
	}
}

// TestAdmissionPerKey: a key at its bound waits, in the queue, while
// another key's request takes a free slot; released, it goes ahead.
func TestAdmissionPerKey(t *testing.T) {
	a := newAdmission(3, 1, 2)
	ctx := context.Background()
	r1, err := a.enter(ctx, "hog")
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		r, err := a.enter(ctx, "hog") // its key's bound: queues
		if err == nil {
			r()
		}
		waited <- err
	}()
	for a.waiting.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	r2, err := a.enter(ctx, "other")
	if err != nil {
		t.Fatalf("another key with slots free: %v", err)
	}
	r3, err := a.enter(ctx, "") // no key: the global bound only
	if err != nil {
		t.Fatalf("no key: %v", err)
	}
	select {
	case err := <-waited:
		t.Fatalf("the key's second request went ahead of its bound: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	r1()
	r1() // twice is harmless
	if err := <-waited; err != nil {
		t.Fatalf("queued request: %v", err)
	}
	r2()
	r3()
	if a.waiting.Load() != 0 || len(a.slots) != 0 || len(a.keys) != 0 {
		t.Fatalf("leaked: waiting %d, slots %d, keys %d", a.waiting.Load(), len(a.slots), len(a.keys))
	}
}
