package api

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

const requestLogKey ctxKey = 1

// requestLog is what a request's log line tells beyond its route and
// status: who sent it, what it made and where its time went, filled in by
// the handler and by the pipeline's observer as the request goes. With the
// X-Request-Id a client quotes, it is how an operator finds the request.
type requestLog struct {
	mu       sync.Mutex
	user     string
	key      string
	pages    int
	replayed bool
	cut      string      // the answer was not sent in full: what became of its credits
	stages   []stageTime // summed by stage, in the order each first ended
	closed   bool        // written: what comes after (a charge retried later) is not added
}

type stageTime struct {
	name   string
	d      time.Duration
	calls  int
	failed bool
}

// observeStage records a stage call in the metrics and in the log line of
// the request whose context ctx is.
func (s *Server) observeStage(ctx context.Context, name string, d time.Duration, err error) {
	s.metrics.ObserveStage(name, s.stages.Plugin(name), d, err)
	logOf(ctx).stage(name, d, err)
}

func withRequestLog(ctx context.Context) (context.Context, *requestLog) {
	l := &requestLog{}
	return context.WithValue(ctx, requestLogKey, l), l
}

// logOf returns the request's log, or nil outside a request (a nil log
// takes every call and records nothing).
func logOf(ctx context.Context) *requestLog {
	l, _ := ctx.Value(requestLogKey).(*requestLog)
	return l
}

func (l *requestLog) stage(name string, d time.Duration, err error) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	for i := range l.stages {
		if l.stages[i].name == name {
			st := &l.stages[i]
			st.d += d
			st.calls++
			st.failed = st.failed || err != nil
			return
		}
	}
	l.stages = append(l.stages, stageTime{name: name, d: d, calls: 1, failed: err != nil})
}

func (l *requestLog) principal(p stage.Principal) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.user, l.key = p.UserID, p.KeyID
	l.mu.Unlock()
}

func (l *requestLog) undelivered(credits string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.cut = credits
	l.mu.Unlock()
}

func (l *requestLog) result(pages int, replayed bool) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.pages, l.replayed = pages, replayed
	l.mu.Unlock()
}

// quietRoute: the probes, the scrape, the dashboard's files and a GET of
// a path no route has (a scanner's, mostly), asked for all the time and by
// machines, are logged at debug level only.
func quietRoute(method, route string) bool {
	switch route {
	case "/healthz", "/readyz", "/metrics":
		return true
	}
	return (method == http.MethodGet || method == http.MethodHead) && !strings.HasPrefix(route, "/v1/")
}

// write logs the request's line once it has been answered.
func (l *requestLog) write(log *slog.Logger, r *http.Request, client, id, route string, status int, bytes int64, elapsed time.Duration) {
	level := slog.LevelInfo
	if quietRoute(r.Method, route) {
		level = slog.LevelDebug
	}
	ctx := r.Context()
	if !log.Enabled(ctx, level) {
		l.close()
		return
	}
	attrs := []slog.Attr{
		slog.String("requestId", id), slog.String("client", client), slog.String("method", r.Method), slog.String("route", route),
		slog.Int("status", status), slog.Int64("bytes", bytes), slog.Float64("ms", ms(elapsed)),
	}
	l.mu.Lock()
	l.closed = true
	if l.user != "" {
		attrs = append(attrs, slog.String("user", l.user), slog.String("key", l.key))
	}
	if l.pages > 0 {
		attrs = append(attrs, slog.Int("pages", l.pages))
	}
	if l.replayed { // an idempotent retry: the first result again, not charged
		attrs = append(attrs, slog.Bool("replayed", true))
	}
	if l.cut != "" { // the PDF not sent in full: refunded, or charged before the cut
		attrs = append(attrs, slog.String("undelivered", l.cut))
	}
	if len(l.stages) > 0 {
		// Milliseconds a stage's calls took in all: the meter's are the
		// reservation and the charge; "!" marks a stage that failed.
		st := make([]any, 0, len(l.stages))
		for _, s := range l.stages {
			key := s.name
			if s.failed {
				key += "!"
			}
			st = append(st, slog.Float64(key, ms(s.d)))
		}
		attrs = append(attrs, slog.Group("stages", st...))
	}
	l.mu.Unlock()
	log.LogAttrs(ctx, level, "request", attrs...)
}

func (l *requestLog) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

// ms is d in milliseconds to a tenth of one.
func ms(d time.Duration) float64 {
	return float64(d.Round(100*time.Microsecond)) / float64(time.Millisecond)
}
