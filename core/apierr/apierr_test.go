package apierr

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

func TestFromStage(t *testing.T) {
	secret := errors.New("dial unix /run/mdpress/plugin-123.sock: connection refused")
	tests := []struct {
		err    error
		status int
	}{
		{stage.Errorf(stage.CodeInvalid, "bad"), 400},
		{stage.Errorf(stage.CodeUnauthenticated, "bad key"), 401},
		{stage.Errorf(stage.CodeForbidden, "no credits"), 403},
		{stage.Errorf(stage.CodeNotFound, "x"), 404},
		{stage.Errorf(stage.CodeGone, "x"), 410},
		{&stage.Error{Code: stage.CodeTooLarge, Message: "too big", Details: map[string]string{"size": "70 kB"}}, 413},
		{stage.Errorf(stage.CodeBusy, "x"), 429},
		{stage.Wrap(stage.CodeTimeout, secret, "x"), 500},
		{stage.Wrap(stage.CodeUnavailable, secret, "x"), 500},
		{secret, 500},
	}
	for _, tt := range tests {
		e := FromStage(tt.err)
		if e.Status != tt.status {
			t.Errorf("%v -> %d, want %d", tt.err, e.Status, tt.status)
		}
		if strings.Contains(e.Body.Error+e.Body.Hint+e.Body.Message, "/run/") {
			t.Errorf("internal detail in body: %+v", e.Body)
		}
		if tt.status == http.StatusRequestEntityTooLarge && e.Body.Size != "70 kB" {
			t.Errorf("size lost: %+v", e.Body)
		}
		if tt.status == http.StatusTooManyRequests && e.RetryAfter == 0 {
			t.Error("429 without Retry-After")
		}
	}
}
