package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestCauseLogged: what does not travel to the host is logged by the
// plugin, so that an operator can learn why the account store would not
// open; a client's own mistake and a cancellation are not.
func TestCauseLogged(t *testing.T) {
	var buf bytes.Buffer
	saved := causeLog
	causeLog = func() *slog.Logger { return slog.New(slog.NewTextHandler(&buf, nil)) }
	t.Cleanup(func() { causeLog = saved })

	cause := errors.New(`password authentication failed for user "mdpress"`)
	st := toStatus(context.Background(), stage.Wrap(stage.CodeInternal, cause, "cannot open the account store"))
	if strings.Contains(st.Error(), "password") {
		t.Fatalf("the cause travelled: %v", st)
	}
	if !strings.Contains(buf.String(), "password authentication failed") {
		t.Fatalf("the cause was not logged: %q", buf.String())
	}
	buf.Reset()
	_ = toStatus(context.Background(), stage.Errorf(stage.CodeInvalid, "bad page size"))
	_ = toStatus(context.Background(), fmt.Errorf("render: %w", context.Canceled))
	_ = toStatus(context.Background(), stage.Wrap(stage.CodeUnavailable, fmt.Errorf("%w: tab closed", context.Canceled), "rendering was canceled"))
	if buf.Len() != 0 {
		t.Fatalf("logged what needs no operator: %q", buf.String())
	}
}
