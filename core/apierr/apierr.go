// Package apierr is the public error model: every failure the API returns is
// an *Error carrying the HTTP status and the body fields of the contract.
// Stage errors map to it by their code; nothing internal reaches a body.
package apierr

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Body is the JSON error body of the public contract.
type Body struct {
	Error   string         `json:"error"`
	Details map[string]any `json:"details,omitempty"`
	Message string         `json:"message,omitempty"`
	Hint    string         `json:"hint,omitempty"`
	Size    string         `json:"size,omitempty"`
}

// Error is an API error: a status and a body.
type Error struct {
	Status int
	Body   Body
	// RetryAfter, in seconds, is sent as the Retry-After header when > 0.
	RetryAfter int
	// Cause is logged, never sent.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Body.Error + ": " + e.Cause.Error()
	}
	return e.Body.Error
}

func (e *Error) Unwrap() error { return e.Cause }

// New returns an error with the given status, name and text.
func New(status int, name, text string) *Error {
	return &Error{Status: status, Body: Body{Error: text, Message: name}}
}

// WithHint sets the hint.
func (e *Error) WithHint(hint string) *Error { e.Body.Hint = hint; return e }

// WithDetails sets the details.
func (e *Error) WithDetails(d map[string]any) *Error { e.Body.Details = d; return e }

// Names of errors, sent in the body's message field.
const (
	NameInvalidRequest   = "InvalidRequest"
	NameUnauthorized     = "Unauthorized"
	NameForbidden        = "Forbidden"
	NameInsufficient     = "InsufficientCredits"
	NameNotFound         = "NotFound"
	NameGone             = "Gone"
	NameTooLarge         = "PayloadTooLarge"
	NameRateLimited      = "RateLimited"
	NameBusy             = "Busy"
	NameTimeout          = "Timeout"
	NameInternal         = "InternalError"
	NameUnavailable      = "ServiceUnavailable"
	NameMethodNotAllowed = "MethodNotAllowed"
)

// FromStage maps a stage failure of a conversion to an API error. Only the
// stage's safe message and details reach the body.
func FromStage(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	msg := stage.SafeMessage(err)
	var out *Error
	switch stage.CodeOf(err) {
	case stage.CodeInvalid:
		out = New(http.StatusBadRequest, NameInvalidRequest, msg)
	case stage.CodeUnauthenticated:
		out = New(http.StatusUnauthorized, NameUnauthorized, msg)
	case stage.CodeForbidden:
		name := NameForbidden
		var se *stage.Error
		if errors.As(err, &se) && se.Details["needed"] != "" {
			name = NameInsufficient // the meter's refusal: it says what was needed
		}
		out = New(http.StatusForbidden, name, msg)
	case stage.CodeNotFound:
		out = New(http.StatusNotFound, NameNotFound, msg)
	case stage.CodeGone:
		out = New(http.StatusGone, NameGone, msg)
	case stage.CodeTooLarge:
		out = New(http.StatusRequestEntityTooLarge, NameTooLarge, msg)
	case stage.CodeBusy:
		out = New(http.StatusTooManyRequests, NameBusy, msg).WithHint("retry after the Retry-After delay")
		out.RetryAfter = 1
	case stage.CodeTimeout:
		// Any stage's, not only the render's: a key check or a reservation
		// waiting on a locked account store was told to split its document.
		out = New(http.StatusInternalServerError, NameTimeout, "a processing stage took longer than the time allowed; no credit was charged").
			WithHint("retry in a moment; a document that keeps timing out needs splitting or simplifying")
	case stage.CodeUnavailable:
		out = New(http.StatusInternalServerError, NameUnavailable, "a processing stage is unavailable; no credit was charged").
			WithHint("retry in a moment")
		out.RetryAfter = 1
	default:
		out = New(http.StatusInternalServerError, NameInternal, "the PDF could not be produced; no credit was charged")
	}
	var se *stage.Error
	if errors.As(err, &se) && out.Status < 500 {
		// A stage's details are safe for clients (the SDK's contract), but
		// only on a refusal: a failure's say nothing a client can act on.
		for k, v := range se.Details {
			if k == "size" {
				out.Body.Size = v // the contract's own field
				continue
			}
			if out.Body.Details == nil {
				out.Body.Details = make(map[string]any, len(se.Details))
			}
			out.Body.Details[k] = detailValue(v)
		}
	}
	out.Cause = err
	return out
}

// FromStageElsewhere is FromStage for a request that converts nothing (a
// download, the account's info, a sign-up): its failures say nothing of a
// PDF produced or a credit charged, which would mislead there.
func FromStageElsewhere(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	out := FromStage(err)
	switch stage.CodeOf(err) {
	case stage.CodeTimeout:
		out.Body.Error, out.Body.Hint = "the request took longer than the time allowed", "retry in a moment"
	case stage.CodeUnavailable:
		out.Body.Error = "a processing stage is unavailable"
	default:
		if out.Status >= 500 {
			out.Body.Error = "the request could not be completed"
		}
	}
	return out
}

// detailValue is v as JSON would have it: a count (credits, needed) as a
// number, anything else as the text it is.
func detailValue(v string) any {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && strconv.FormatInt(n, 10) == v {
		return n
	}
	return v
}
