package api

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/mdpress/mdpress/sdk/stage"
)

// admission bounds how many conversions run at once, how many of them one
// API key runs, and how many may wait for a slot. Past the queue, requests
// are refused at once (429) rather than piling up memory in the plugins; a
// waiting request leaves when its context ends.
type admission struct {
	slots   chan struct{}
	perKey  int
	queue   int64
	waiting atomic.Int64

	mu   sync.Mutex
	keys map[string]*keySlots
}

// keySlots are one key's conversion slots; the entry lives while a request
// of the key holds or waits for one.
type keySlots struct {
	held chan struct{}
	refs int // under admission.mu
}

func newAdmission(concurrent, perKey, queue int) *admission {
	return &admission{slots: make(chan struct{}, concurrent), perKey: perKey, queue: int64(queue),
		keys: make(map[string]*keySlots)}
}

// enter waits for one of key's slots, then for a slot; the returned func
// releases both, and may be called again (a handler gives the slots back
// once its conversion is done, and again on its way out). A request that
// waits, for either, takes one place in the queue. An empty key (an auth
// plugin that names no key) is not bounded on its own: it would put every
// account's conversions under one key's bound.
func (a *admission) enter(ctx context.Context, key string) (func(), error) {
	queued := false
	defer func() {
		if queued {
			a.waiting.Add(-1)
		}
	}()
	var ks *keySlots
	if key != "" {
		ks = a.keyRef(key)
		if err := a.wait(ctx, ks.held, &queued); err != nil {
			a.keyUnref(key, ks)
			return nil, err
		}
	}
	if err := a.wait(ctx, a.slots, &queued); err != nil {
		if ks != nil {
			<-ks.held
			a.keyUnref(key, ks)
		}
		return nil, err
	}
	return sync.OnceFunc(func() {
		<-a.slots
		if ks != nil {
			<-ks.held
			a.keyUnref(key, ks)
		}
	}), nil
}

// wait takes a place in ch, taking a place in the queue first, unless
// *queued says the request has one, when it cannot at once.
func (a *admission) wait(ctx context.Context, ch chan struct{}, queued *bool) error {
	select {
	case ch <- struct{}{}:
		return nil
	default:
	}
	if !*queued {
		if a.waiting.Add(1) > a.queue {
			a.waiting.Add(-1)
			return stage.Errorf(stage.CodeBusy, "the service is at capacity; retry shortly")
		}
		*queued = true
	}
	select {
	case ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (a *admission) keyRef(key string) *keySlots {
	a.mu.Lock()
	defer a.mu.Unlock()
	ks := a.keys[key]
	if ks == nil {
		ks = &keySlots{held: make(chan struct{}, a.perKey)}
		a.keys[key] = ks
	}
	ks.refs++
	return ks
}

func (a *admission) keyUnref(key string, ks *keySlots) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ks.refs--; ks.refs == 0 {
		delete(a.keys, key)
	}
}
