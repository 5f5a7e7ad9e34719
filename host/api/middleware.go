package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/mdpress/mdpress/core/apierr"
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
)

type ctxKey int

const requestIDKey ctxKey = 0

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// statusRecorder remembers the status for metrics and logs.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	route  string // set by a handler that knows the route when mux does not
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// observe tags the request with an id, recovers panics into a safe 500 and
// records metrics by route template (never by raw path).
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var b [8]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		w.Header().Set("X-Request-Id", id)
		// Error bodies echo a client's values ("received"), and the
		// dashboard, metrics and hosted files share this origin: no
		// answer may be read as anything but its declared type.
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// The plugins log under the same id, so the X-Request-Id a client
		// quotes finds their lines about its request too.
		ctx := sdkplugin.WithRequestID(context.WithValue(r.Context(), requestIDKey, id), id)
		ctx, reqLog := withRequestLog(ctx)
		r = r.WithContext(ctx)
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic in handler", "requestId", id, "panic", p)
				if rec.status == 0 {
					writeError(rec, apierr.New(http.StatusInternalServerError, apierr.NameInternal, "internal error"))
				}
			}
			route := "unmatched"
			if rec.route != "" {
				route = rec.route
			} else if cur := mux.CurrentRoute(r); cur != nil {
				if tpl, err := cur.GetPathTemplate(); err == nil {
					route = tpl
				} else if name := cur.GetName(); name != "" {
					route = name
				}
			}
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			elapsed := time.Since(start)
			s.metrics.ObserveHTTP(route, status, elapsed)
			reqLog.write(s.log, r, s.clientOf(r), id, route, status, rec.bytes, elapsed)
		}()
		next.ServeHTTP(rec, r)
	})
}

// clientOf is the address a request came from, through the trusted proxies,
// for its log line.
func (s *Server) clientOf(r *http.Request) string {
	if ip, ok := clientIP(r, s.opt.TrustedProxies); ok {
		return ip.String()
	}
	return remoteHost(r)
}

func itoa(n int) string { return strconv.Itoa(n) }
