package api

import (
	"context"
	"sync"

	"github.com/mdpress/mdpress/sdk/stage"
)

// admission bounds how many conversions run at once, how many of them one
// API key runs, and how many may wait for a slot. Past the queue, requests
// are refused at once (429) rather than piling up memory in the plugins; a
// waiting request leaves when its context ends.
//
// The queue is shared, but not first come, first kept: when it is full, a
// request of an account that holds fewer places than the account holding
// the most takes the place of that account's newest waiter, which is
// refused as if it had found the queue full. One account alone may still
// fill the whole queue; what it can no longer do is keep every other
// account out of it (a few keys of one unlimited plan sending without
// pause got every other account's conversions a 429).
type admission struct {
	slots  chan struct{}
	perKey int
	queue  int

	mu      sync.Mutex
	keys    map[string]*keySlots
	waiting int                  // queue places taken
	owners  map[string][]*waiter // the waiters of each account, oldest first
}

// keySlots are one key's conversion slots; the entry lives while a request
// of the key holds or waits for one.
type keySlots struct {
	held chan struct{}
	refs int // under admission.mu
}

// waiter is one request's queue place; evicted is closed when another
// account's request takes the place.
type waiter struct {
	owner   string
	evicted chan struct{}
}

func newAdmission(concurrent, perKey, queue int) *admission {
	return &admission{slots: make(chan struct{}, concurrent), perKey: perKey, queue: queue,
		keys: make(map[string]*keySlots), owners: make(map[string][]*waiter)}
}

// errQueueFull refuses a request for which the queue has no place.
var errQueueFull = stage.Errorf(stage.CodeBusy, "the service is at capacity; retry shortly")

// enter waits for one of key's slots, then for a slot; the returned func
// releases both, and may be called again (a handler gives the slots back
// once its conversion is done, and again on its way out). A request that
// waits, for either, takes one place in the queue, counted against account
// (the key when it is empty). An empty key (an auth plugin that names no
// key) is not bounded on its own: it would put every account's
// conversions under one key's bound.
func (a *admission) enter(ctx context.Context, key, account string) (func(), error) {
	if account == "" {
		account = key
	}
	var w *waiter
	defer func() {
		if w != nil {
			a.leave(w)
		}
	}()
	var ks *keySlots
	if key != "" {
		ks = a.keyRef(key)
		if err := a.wait(ctx, ks.held, account, &w); err != nil {
			a.keyUnref(key, ks)
			return nil, err
		}
	}
	if err := a.wait(ctx, a.slots, account, &w); err != nil {
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

// wait takes a place in ch, taking a place in the queue first, unless *w
// is the request's place already, when it cannot at once.
func (a *admission) wait(ctx context.Context, ch chan struct{}, account string, w **waiter) error {
	select {
	case ch <- struct{}{}:
		return nil
	default:
	}
	if *w == nil {
		if *w = a.join(account); *w == nil {
			return errQueueFull
		}
	}
	select {
	case ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-(*w).evicted:
		return errQueueFull
	}
}

// join takes a queue place for account, the place of another account's
// newest waiter if the queue is full and that account holds at least two
// more places than account does; nil if there is none to take. The margin
// of two keeps two accounts from taking one place from each other in turn.
func (a *admission) join(account string) *waiter {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.waiting >= a.queue {
		var most string
		for owner, ws := range a.owners {
			if len(ws) > len(a.owners[most]) {
				most = owner
			}
		}
		ws := a.owners[most]
		if len(ws) < len(a.owners[account])+2 {
			return nil
		}
		out := ws[len(ws)-1]
		close(out.evicted)
		a.remove(out)
	}
	w := &waiter{owner: account, evicted: make(chan struct{})}
	a.owners[account] = append(a.owners[account], w)
	a.waiting++
	return w
}

// leave gives back w's queue place, unless another request took it.
func (a *admission) leave(w *waiter) {
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-w.evicted:
	default:
		a.remove(w)
	}
}

// remove drops w from the queue; under a.mu.
func (a *admission) remove(w *waiter) {
	ws := a.owners[w.owner]
	for i, o := range ws {
		if o == w {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(a.owners, w.owner)
	} else {
		a.owners[w.owner] = ws
	}
	a.waiting--
}

// queued is the number of queue places taken.
func (a *admission) queued() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.waiting
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
