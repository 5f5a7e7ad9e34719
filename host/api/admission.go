package api

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/mdpress/mdpress/sdk/stage"
)

// admission bounds how many conversions run at once and how many may wait
// for a slot. Past the queue, requests are refused at once (429) rather
// than piling up memory in the plugins; a waiting request leaves when its
// context ends.
type admission struct {
	slots   chan struct{}
	queue   int64
	waiting atomic.Int64
}

func newAdmission(concurrent, queue int) *admission {
	return &admission{slots: make(chan struct{}, concurrent), queue: int64(queue)}
}

// enter waits for a slot; the returned func releases it, and may be
// called again (a handler gives the slot back once its conversion is done,
// and again on its way out).
func (a *admission) enter(ctx context.Context) (func(), error) {
	select {
	case a.slots <- struct{}{}:
		return sync.OnceFunc(a.leave), nil
	default:
	}
	if a.waiting.Add(1) > a.queue {
		a.waiting.Add(-1)
		return nil, stage.Errorf(stage.CodeBusy, "the service is at capacity; retry shortly")
	}
	defer a.waiting.Add(-1)
	select {
	case a.slots <- struct{}{}:
		return sync.OnceFunc(a.leave), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (a *admission) leave() { <-a.slots }
