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
	r1, err1 := a.enter(ctx, "k", "k")
	r2, err2 := a.enter(ctx, "k", "k")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	waited := make(chan error, 1)
	go func() {
		r, err := a.enter(ctx, "k", "k") // queues
		if err == nil {
			r()
		}
		waited <- err
	}()
	for a.queued() != 1 {
		time.Sleep(time.Millisecond)
	}
	if _, err := a.enter(ctx, "k", "k"); stage.CodeOf(err) != stage.CodeBusy {
		t.Fatalf("queue full: %v, want busy", err)
	}
	r1()
	if err := <-waited; err != nil {
		t.Fatalf("queued request: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	r3, _ := a.enter(ctx, "k", "k")
	go cancel()
	if _, err := a.enter(cctx, "k", "k"); err == nil {
		t.Fatal("a canceled waiter must leave the queue")
	}
	r2()
	r3()
	if a.queued() != 0 || len(a.slots) != 0 || len(a.keys) != 0 {
		t.Fatalf("leaked: waiting %d, slots %d, keys %d", a.queued(), len(a.slots), len(a.keys))
	}
}

// TestAdmissionPerKey: a key at its bound waits, in the queue, while
// another key's request takes a free slot; released, it goes ahead.
func TestAdmissionPerKey(t *testing.T) {
	a := newAdmission(3, 1, 2)
	ctx := context.Background()
	r1, err := a.enter(ctx, "hog", "hog")
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		r, err := a.enter(ctx, "hog", "hog") // its key's bound: queues
		if err == nil {
			r()
		}
		waited <- err
	}()
	for a.queued() != 1 {
		time.Sleep(time.Millisecond)
	}
	r2, err := a.enter(ctx, "other", "other")
	if err != nil {
		t.Fatalf("another key with slots free: %v", err)
	}
	r3, err := a.enter(ctx, "", "") // no key: the global bound only
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
	if a.queued() != 0 || len(a.slots) != 0 || len(a.keys) != 0 {
		t.Fatalf("leaked: waiting %d, slots %d, keys %d", a.queued(), len(a.slots), len(a.keys))
	}
}

// TestAdmissionQueueShare: one account may fill the whole queue, but when
// it has, another account's request takes the place of its newest waiter,
// which is refused as busy; an account holding about as many places as
// the most is refused itself.
func TestAdmissionQueueShare(t *testing.T) {
	a := newAdmission(1, 1, 3)
	ctx := context.Background()
	r0, err := a.enter(ctx, "hog1", "hog")
	if err != nil {
		t.Fatal(err)
	}
	hogs := make([]chan error, 3)
	for i := range hogs {
		hogs[i] = make(chan error, 1)
		go func() {
			r, err := a.enter(ctx, "hog2", "hog") // another key of the account
			if err == nil {
				r()
			}
			hogs[i] <- err
		}()
		for a.queued() != i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	if _, err := a.enter(ctx, "hog3", "hog"); stage.CodeOf(err) != stage.CodeBusy {
		t.Fatalf("the account's own request, queue full: %v, want busy", err)
	}
	other := make(chan error, 1)
	go func() {
		r, err := a.enter(ctx, "other", "other")
		if err == nil {
			r()
		}
		other <- err
	}()
	if err := <-hogs[2]; stage.CodeOf(err) != stage.CodeBusy {
		t.Fatalf("the hog's newest waiter: %v, want busy", err)
	}
	// Two places to one: no more places change hands, or two accounts
	// would take one from each other in turn.
	if _, err := a.enter(ctx, "other2", "other"); stage.CodeOf(err) != stage.CodeBusy {
		t.Fatalf("other's second request, holding one place to the hog's two: %v, want busy", err)
	}
	if a.queued() != 3 {
		t.Fatalf("queued %d, want 3", a.queued())
	}
	r0()
	for i, c := range []chan error{hogs[0], hogs[1], other} {
		if err := <-c; err != nil {
			t.Fatalf("waiter %d: %v", i, err)
		}
	}
	if a.queued() != 0 || len(a.owners) != 0 || len(a.slots) != 0 || len(a.keys) != 0 {
		t.Fatalf("leaked: waiting %d, owners %d, slots %d, keys %d", a.queued(), len(a.owners), len(a.slots), len(a.keys))
	}
}
