package plugin

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// When the parts fail (the parse failed), the render is cancelled and the
// parts' error returned as is. A render in parts that the host cancels
// (its parse failed, its reservation was refused, its key check failed)
// is no failure of the render plugin: the renderer's parts.Next must say
// the render was cancelled (a context error), and the plugin must not log
// it as a failed stage call at error level, as it does an internal error.
func TestRenderPartsStopsWhenPartsFail(t *testing.T) {
	var buf lockedBuffer
	saved := causeLog
	causeLog = func() *slog.Logger { return slog.New(slog.NewTextHandler(&buf, nil)) }
	t.Cleanup(func() { causeLog = saved })

	impl := &partStages{rendered: make(chan struct{}), gotOne: make(chan struct{})}
	renderer := connect(t, stage.NameRender, impl)
	parseFailed := errors.New("the parse failed")
	parts := &sliceParts{parts: []stage.Part{{Root: splitReport(1, 2)[0]}}, err: parseFailed, wait: impl.gotOne}
	if _, err := renderer.RenderParts(context.Background(), &stage.RenderRequest{}, parts); !errors.Is(err, parseFailed) {
		t.Fatalf("err = %v, want the parts' own", err)
	}
	<-impl.rendered
	impl.mu.Lock()
	nextErr := impl.nextErr
	impl.mu.Unlock()
	if !errors.Is(nextErr, context.Canceled) {
		t.Errorf("the renderer's parts.Next said %v (%T), not that the render was cancelled", nextErr, nextErr)
	}
	time.Sleep(200 * time.Millisecond) // the handler maps the renderer's error after it returns
	if out := buf.String(); out != "" {
		t.Errorf("the plugin logged a cancelled render as a failure:\n%s", out)
	}
}
