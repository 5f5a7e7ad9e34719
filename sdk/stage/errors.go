package stage

import (
	"context"
	"errors"
	"fmt"
)

// Code classifies a failure. Codes cross the plugin boundary as gRPC codes
// and the host maps them to HTTP statuses.
type Code int

const (
	CodeInternal        Code = iota // 500; the message is replaced by a generic one
	CodeInvalid                     // 400
	CodeUnauthenticated             // 401
	CodeForbidden                   // 403: not allowed, or out of credits
	CodeNotFound                    // 404
	CodeGone                        // 410: expired
	CodeTooLarge                    // 413
	CodeBusy                        // 429: try again later
	CodeTimeout                     // 500: the stage ran past its deadline
	CodeUnavailable                 // 503: a dependency is down
)

var codeNames = [...]string{"internal", "invalid", "unauthenticated", "forbidden", "not_found", "gone", "too_large", "busy", "timeout", "unavailable"}

func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("code(%d)", int(c))
}

// Error is a failure with a message that is safe to show to a client. The
// wrapped error holds the internals; it is logged, never sent.
type Error struct {
	Code    Code
	Message string            // safe for clients
	Details map[string]string // safe for clients, e.g. "size"
	Err     error             // internal cause, may be nil
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error whose message is the formatted text.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with a safe message and an internal cause.
func Wrap(code Code, err error, message string) *Error {
	return &Error{Code: code, Message: message, Err: err}
}

// CodeOf returns the code of the first *Error in err's chain, CodeTimeout
// for context deadline errors, and CodeInternal otherwise.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return CodeTimeout
	}
	return CodeInternal
}

// SafeMessage returns the client-safe message of err: the message of the
// first *Error in its chain unless that is internal, else a generic text.
func SafeMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != CodeInternal && e.Message != "" {
		return e.Message
	}
	return "internal error"
}
