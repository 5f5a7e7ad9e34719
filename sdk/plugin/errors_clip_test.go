package plugin

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestPluginErrorBounded: a plugin's error reaches the API client and the
// host's log as it is, so what crosses the wire is bounded and its code is
// one the host knows.
func TestPluginErrorBounded(t *testing.T) {
	details := map[string]string{}
	for i := range 100 {
		details[strings.Repeat("k", i+1)] = strings.Repeat("v", 10000)
	}
	tests := []struct {
		name     string
		err      error
		wantCode stage.Code
	}{
		{"long message", stage.Errorf(stage.CodeInvalid, "%s", strings.Repeat("Zé", 1<<19)), stage.CodeInvalid},
		{"many long details", &stage.Error{Code: stage.CodeTooLarge, Message: "too big", Details: details}, stage.CodeTooLarge},
		{"unknown code", &stage.Error{Code: 400, Message: "an HTTP status is not a code"}, stage.CodeInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := connect(t, stage.NameRender, &fakeStages{err: tt.err})
			resp, err := c.Render(context.Background(), &stage.RenderRequest{})
			if err == nil {
				t.Fatalf("the call succeeded (%+v)", resp)
			}
			if got := stage.CodeOf(err); got != tt.wantCode {
				t.Fatalf("code = %v, want %v (%.200v)", got, tt.wantCode, err)
			}
			se := err.(*stage.Error)
			if len(se.Message) > maxMessageBytes+len("…") || !strings.HasPrefix(tt.err.(*stage.Error).Message, strings.TrimSuffix(se.Message, "…")) && tt.wantCode != stage.CodeInternal {
				t.Fatalf("message of %d bytes, want at most %d and a prefix of the plugin's", len(se.Message), maxMessageBytes)
			}
			if len(se.Details) > maxDetails {
				t.Fatalf("%d details, want at most %d", len(se.Details), maxDetails)
			}
			for k, v := range se.Details {
				if len(k) > maxDetailBytes+len("…") || len(v) > maxDetailBytes+len("…") {
					t.Fatalf("detail %d/%d bytes", len(k), len(v))
				}
			}
		})
	}
}

// TestForeignErrorBounded: an error from a plugin not built with the SDK
// (a bare gRPC status, no error info) goes into the host's log as the
// cause of an internal error; its message is cut there too.
func TestForeignErrorBounded(t *testing.T) {
	for _, code := range []codes.Code{codes.Internal, codes.Unavailable, codes.DeadlineExceeded, codes.InvalidArgument} {
		err := fromStatus(status.Error(code, strings.Repeat("Z", 1<<20)))
		if n := len(err.Error()); n > 2*maxMessageBytes {
			t.Errorf("%v: an error of %d bytes, want at most %d", code, n, 2*maxMessageBytes)
		}
		if !strings.Contains(err.Error(), "ZZZZ") {
			t.Errorf("%v: the message is gone altogether: %v", code, err)
		}
	}
}
