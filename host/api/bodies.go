package api

import (
	"errors"
	"io"
	"sync/atomic"

	"github.com/mdpress/mdpress/sdk/stage"
)

// bodies bounds the bytes of request bodies the host holds at once. A body
// is read and decoded before the request takes its place in the admission
// queue, and the Markdown stays in memory while it waits, so without this
// bound a few hundred clients sending the 10 MiB limit at once held
// gigabytes (60 of them: 1.5 GB). Past the bound a request is refused as
// busy (429) while it is read, before it holds more.
type bodies struct {
	max  int64
	used atomic.Int64
}

// take reserves n bytes if they fit.
func (b *bodies) take(n int64) bool {
	for {
		used := b.used.Load()
		if used+n > b.max {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

func (b *bodies) give(n int64) { b.used.Add(-n) }

// errBodiesFull is what a read past the bound fails with.
var errBodiesFull = stage.Errorf(stage.CodeBusy, "the service is at capacity; retry shortly")

// heldBody reserves every byte it reads; held is what to give back when
// the request is done with the body and what came of it.
type heldBody struct {
	io.ReadCloser
	b    *bodies
	held int64
}

func (r *heldBody) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if n > 0 {
		if !r.b.take(int64(n)) {
			return 0, errBodiesFull
		}
		r.held += int64(n)
	}
	return n, err
}

// hold counts n more bytes for the request, past the bound if need be: an
// answer already made is sent, but requests that come meanwhile find less
// room.
func (r *heldBody) hold(n int64) {
	r.b.used.Add(n)
	r.held += n
}

// release gives back what the body held, when the request has answered.
func (r *heldBody) release() {
	r.b.give(r.held)
	r.held = 0
}

// isBodiesFull reports whether a body read failed on the bound.
func isBodiesFull(err error) bool { return errors.Is(err, errBodiesFull) }
