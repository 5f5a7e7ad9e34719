package plugin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"unicode/utf8"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mdpress/mdpress/sdk/stage"
)

const errorDomain = "mdpress"

var toGRPC = map[stage.Code]codes.Code{
	stage.CodeInternal:        codes.Internal,
	stage.CodeInvalid:         codes.InvalidArgument,
	stage.CodeUnauthenticated: codes.Unauthenticated,
	stage.CodeForbidden:       codes.PermissionDenied,
	stage.CodeNotFound:        codes.NotFound,
	stage.CodeGone:            codes.FailedPrecondition,
	stage.CodeTooLarge:        codes.OutOfRange,
	stage.CodeBusy:            codes.ResourceExhausted,
	stage.CodeTimeout:         codes.DeadlineExceeded,
	stage.CodeUnavailable:     codes.Unavailable,
}

// causeLog is where an error's cause goes that does not travel.
var causeLog = sync.OnceValue(Logger)

// toStatus encodes err for the wire. Only the safe message and details of a
// *stage.Error travel; the cause of an internal or unavailable one (a
// refused database password, a directory that cannot be written) is logged
// here, where the host re-levels it into its own log, under the request
// id of ctx.
func toStatus(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	code := stage.CodeOf(err)
	if _, known := toGRPC[code]; !known {
		// An HTTP status in Code, say: as codes.OK the status would be no
		// error at all, and the failed call would answer an empty success.
		err = stage.Wrap(stage.CodeInternal, fmt.Errorf("unknown error code %d (see stage.Code): %w", int(code), err), "internal error")
		code = stage.CodeInternal
	}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		switch code {
		case stage.CodeInternal:
			causeLog().ErrorContext(ctx, "stage call failed", "err", err.Error())
		case stage.CodeUnavailable:
			causeLog().WarnContext(ctx, "stage call failed", "err", err.Error())
		}
	}
	if code == stage.CodeInternal {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			code = stage.CodeTimeout
		case errors.Is(err, context.Canceled):
			return status.Error(codes.Canceled, "canceled")
		}
	}
	msg := stage.SafeMessage(err)
	if code == stage.CodeTimeout && msg == "internal error" {
		msg = "the stage ran past its deadline"
	}
	st := status.New(toGRPC[code], msg)
	info := &errdetails.ErrorInfo{Domain: errorDomain, Reason: strconv.Itoa(int(code))}
	var se *stage.Error
	if errors.As(err, &se) && len(se.Details) > 0 {
		info.Metadata = se.Details
	}
	if withInfo, derr := st.WithDetails(info); derr == nil {
		st = withInfo
	}
	return st.Err()
}

// errConnClosing is gRPC's answer to a call made on, or waiting to
// reconnect, a connection that the host closed: the host is replacing the
// plugin's process, which died. Taken for a cancellation, it made the
// requests caught by a plugin's relaunch fail as internal errors, where
// those that saw the process die fail as the stage being unavailable.
// grpc.ErrClientConnClosing is this error, deprecated for public use.
var errConnClosing = status.Error(codes.Canceled, "grpc: the client connection is closing")

// Answered reports whether err, returned by a Client call, is the plugin's
// own answer rather than a failure to reach it (the process gone, the
// host's deadline passed). A plugin that answers is alive: an answer of
// stage.CodeUnavailable from its Health says that something it depends on
// is down, which relaunching the plugin does not bring back.
func Answered(err error) bool {
	var se *stage.Error
	// fromStatus gives an answer no cause, and a failure of the call its
	// gRPC error as the cause.
	return errors.As(err, &se) && se.Err == nil
}

// fromStatus decodes a gRPC error into a *stage.Error. One from an adapter
// keeps no cause: the status says only its code and message, which the
// error holds, and as a cause would repeat the message after it (the host
// wraps it again). Errors that did not come from an adapter (the process
// died, the deadline passed on the host side) map by their gRPC code.
func fromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return stage.Wrap(stage.CodeInternal, err, "internal error")
	}
	// The cause goes into the host's log whole: a plugin not built with
	// the SDK (no error info) is no more trusted to keep it short.
	cause := err
	if len(st.Message()) > maxMessageBytes {
		cause = status.Error(st.Code(), clip(st.Message()))
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Domain == errorDomain {
			n, _ := strconv.Atoi(info.Reason)
			code := stage.Code(n)
			if _, known := toGRPC[code]; !known {
				return stage.Wrap(stage.CodeInternal, cause, "internal error")
			}
			return &stage.Error{Code: code, Message: clip(st.Message()), Details: clipDetails(info.Metadata)}
		}
	}
	switch st.Code() {
	case codes.DeadlineExceeded:
		return stage.Wrap(stage.CodeTimeout, cause, "the stage ran past its deadline")
	case codes.Canceled:
		if errors.Is(err, errConnClosing) {
			return stage.Wrap(stage.CodeUnavailable, err, "a stage is unavailable")
		}
		return stage.Wrap(stage.CodeInternal, context.Canceled, "canceled")
	case codes.Unavailable:
		return stage.Wrap(stage.CodeUnavailable, cause, "a stage is unavailable")
	}
	return stage.Wrap(stage.CodeInternal, cause, "internal error")
}

// The limits of what a plugin's error carries to a client. The message and
// details go out in the API's error body and into the host's log as they
// are, and a plugin is not trusted to keep them short: one that put a whole
// document in its message sent every client a megabyte of it.
const (
	maxMessageBytes = 1024
	maxDetails      = 16
	maxDetailBytes  = 256
)

// clip cuts s to maxMessageBytes at a rune boundary.
func clip(s string) string { return clipTo(s, maxMessageBytes) }

func clipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// clipDetails keeps at most maxDetails details, each clipped.
func clipDetails(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]string, min(len(m), maxDetails))
	for _, k := range keys[:min(len(keys), maxDetails)] {
		out[clipTo(k, maxDetailBytes)] = clipTo(m[k], maxDetailBytes)
	}
	return out
}
