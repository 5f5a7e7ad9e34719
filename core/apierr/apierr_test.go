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
		if tt.status >= 500 && !strings.Contains(e.Body.Error, "no credit was charged") {
			// The contract's promise for a failure, whichever stage it was.
			t.Errorf("%v -> %q does not say that no credit was charged", tt.err, e.Body.Error)
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
		// A stage that is down (a plugin relaunching, the account database
		// away) is the one failure worth an automatic retry: clients and
		// proxies read the header, not the hint.
		if retry := stage.CodeOf(tt.err) == stage.CodeUnavailable || tt.status == http.StatusTooManyRequests; retry != (e.RetryAfter > 0) {
			t.Errorf("%v -> Retry-After %d", tt.err, e.RetryAfter)
		}
	}
}

// TestFromStageDetails: a refusal carries the stage's details, counts as
// numbers; a failure carries none.
func TestFromStageDetails(t *testing.T) {
	refusal := &stage.Error{Code: stage.CodeForbidden, Message: "out of credits",
		Details: map[string]string{"credits": "0", "needed": "1", "nextReset": "2026-12-24T03:16:33Z", "code": "007"}}
	e := FromStage(refusal)
	if e.Body.Message != NameInsufficient {
		t.Errorf("out of credits named %q", e.Body.Message)
	}
	if other := FromStage(stage.Errorf(stage.CodeForbidden, "key lacks the scope")); other.Body.Message != NameForbidden {
		t.Errorf("another refusal named %q", other.Body.Message)
	}
	want := map[string]any{"credits": int64(0), "needed": int64(1), "nextReset": "2026-12-24T03:16:33Z", "code": "007"}
	if len(e.Body.Details) != len(want) {
		t.Fatalf("details %v, want %v", e.Body.Details, want)
	}
	for k, v := range want {
		if e.Body.Details[k] != v {
			t.Errorf("details[%s] = %#v, want %#v", k, e.Body.Details[k], v)
		}
	}
	tooBig := FromStage(&stage.Error{Code: stage.CodeTooLarge, Message: "too many pages", Details: map[string]string{"limit": "10000 pages", "size": "x"}})
	if tooBig.Body.Details["limit"] != "10000 pages" || tooBig.Body.Size != "x" || tooBig.Body.Details["size"] != nil {
		t.Errorf("413: %+v", tooBig.Body)
	}
	failure := FromStage(&stage.Error{Code: stage.CodeInternal, Message: "x", Details: map[string]string{"path": "/run/x.sock"}})
	if failure.Body.Details != nil {
		t.Errorf("a failure's details reached the body: %v", failure.Body.Details)
	}
}

// TestFromStageElsewhere: a request that converts nothing fails with the
// same statuses as a conversion, but its texts speak of no PDF and no
// credit; a refusal keeps the stage's own message.
func TestFromStageElsewhere(t *testing.T) {
	secret := errors.New("GetObject: connection reset")
	for _, err := range []error{
		stage.Wrap(stage.CodeTimeout, secret, "x"),
		stage.Wrap(stage.CodeUnavailable, secret, "x"),
		stage.Wrap(stage.CodeInternal, secret, "read hosted file"),
		secret,
	} {
		e, conv := FromStageElsewhere(err), FromStage(err)
		if e.Status != conv.Status || e.Body.Message != conv.Body.Message {
			t.Errorf("%v: %d %s, a conversion gets %d %s", err, e.Status, e.Body.Message, conv.Status, conv.Body.Message)
		}
		text := e.Body.Error + " " + e.Body.Hint
		if strings.Contains(text, "credit") || strings.Contains(text, "PDF") || strings.Contains(text, "render") || strings.Contains(text, "connection") {
			t.Errorf("%v: %q", err, text)
		}
	}
	if e := FromStageElsewhere(stage.Errorf(stage.CodeGone, "the file has expired")); e.Status != 410 || e.Body.Error != "the file has expired" {
		t.Errorf("refusal: %d %q", e.Status, e.Body.Error)
	}
}
