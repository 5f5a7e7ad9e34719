package stage

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestCodeOfAndSafeMessage(t *testing.T) {
	tests := []struct {
		err  error
		code Code
		msg  string
	}{
		{Errorf(CodeBusy, "queue full"), CodeBusy, "queue full"},
		{fmt.Errorf("render: %w", Errorf(CodeTooLarge, "big")), CodeTooLarge, "big"},
		{fmt.Errorf("print: %w", context.DeadlineExceeded), CodeTimeout, "internal error"},
		{errors.New("open /secret: denied"), CodeInternal, "internal error"},
		{Wrap(CodeInternal, errors.New("x"), "leaky detail"), CodeInternal, "internal error"},
	}
	for _, tt := range tests {
		if got := CodeOf(tt.err); got != tt.code {
			t.Errorf("CodeOf(%v) = %v, want %v", tt.err, got, tt.code)
		}
		if got := SafeMessage(tt.err); got != tt.msg {
			t.Errorf("SafeMessage(%v) = %q, want %q", tt.err, got, tt.msg)
		}
	}
}
