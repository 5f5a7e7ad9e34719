package api

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/time/rate"

	"github.com/mdpress/mdpress/core/apierr"
	"github.com/mdpress/mdpress/sdk/stage"
)

const authText = "the Authorization header is missing or invalid"

func unauthorized() *apierr.Error {
	return apierr.New(http.StatusUnauthorized, apierr.NameUnauthorized, authText).
		WithHint("send Authorization: Bearer <API_KEY>; get a key from the dashboard or `mdpress accounts create`")
}

// bearer reads the API key from the Authorization header, answering 401
// itself when there is none.
func bearer(w http.ResponseWriter, r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	// A token that is not UTF-8 is no key, and the auth stage could not be
	// asked: a protobuf string must be UTF-8, so the call failed with 500.
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || len(token) > 512 || !utf8.ValidString(token) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mdpress"`)
		writeError(w, unauthorized())
		return "", false
	}
	return token, true
}

// authenticate resolves the bearer key. A missing, malformed or unknown key
// gets the same answer, so the API tells nothing about which keys exist.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, token string) (stage.Principal, bool) {
	p, err := s.checkKey(r.Context(), token)
	if err != nil {
		s.authFailed(w, r, err)
		return stage.Principal{}, false
	}
	return p, true
}

// checkKey asks the auth stage who token belongs to, and remembers the
// answer as a hint for the key's next requests (see convertEarly). A key
// the stage refuses is forgotten; a check that could not be made (the
// stage down, the client gone) says nothing about the key.
func (s *Server) checkKey(ctx context.Context, token string) (stage.Principal, error) {
	c, err := s.client(ctx, stage.NameAuth)
	if err != nil {
		return stage.Principal{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opt.AuthTimeout)
	defer cancel()
	began, start := s.recent.now(), time.Now()
	resp, err := c.Authenticate(ctx, &stage.AuthenticateRequest{Token: token})
	s.observeStage(ctx, stage.NameAuth, time.Since(start), err)
	if err != nil {
		if stage.CodeOf(err) == stage.CodeUnauthenticated {
			s.recent.forget(token)
		}
		// The log line of a failure names the stage, as the pipeline's do.
		return stage.Principal{}, fmt.Errorf("%s: %w", stage.NameAuth, err)
	}
	s.recent.add(token, resp.Principal, began)
	logOf(ctx).principal(resp.Principal)
	return resp.Principal, nil
}

// authFailed answers a failed key check.
func (s *Server) authFailed(w http.ResponseWriter, r *http.Request, err error) {
	if stage.CodeOf(err) == stage.CodeUnauthenticated {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mdpress", error="invalid_token"`)
		writeError(w, unauthorized())
		return
	}
	s.fail(w, r, err)
}

// limiter is the per-key token bucket of each plan's rate limit. Each host
// replica limits on its own; behind N replicas a key gets at most N times its
// rate, which is documented.
type limiter struct {
	now     func() time.Time
	mu      sync.Mutex
	buckets map[string]*bucket
	sweep   time.Time
}

type bucket struct {
	lim     *rate.Limiter
	every   rate.Limit
	burst   int
	touched time.Time
}

func newLimiter(now func() time.Time) *limiter {
	return &limiter{now: now, buckets: map[string]*bucket{}}
}

// allow reports whether the key may proceed, and if not, in how many
// seconds it may retry.
func (l *limiter) allow(keyID string, perMin int64) (bool, int) {
	if perMin <= 0 {
		return true, 0
	}
	return l.allowRate(keyID, rate.Limit(float64(perMin)/60), int(perMin))
}

// allowEarly is allow for a request counted before its key is checked, at
// the limit the key's plan had when it was last checked. A bucket the key
// already has is taken from as it stands, whatever limit it was made for:
// the hint may be older than the plan that made the bucket, and making a
// new one would refill it. It returns the limit the request was counted at
// (0: none).
func (l *limiter) allowEarly(keyID string, perMin int64) (int64, bool) {
	if perMin <= 0 {
		return 0, true
	}
	ok, _, burst := l.take(keyID, rate.Limit(float64(perMin)/60), int(perMin), true)
	return int64(burst), ok
}

// allowRate is allow for any refill rate (per second) and burst.
func (l *limiter) allowRate(key string, every rate.Limit, burst int) (bool, int) {
	ok, retry, _ := l.take(key, every, burst, false)
	return ok, retry
}

// take takes a request from key's bucket, made anew for every and burst
// unless it exists and keep is set; it returns whether there was one, if
// not in how many seconds there will be, and the bucket's burst.
func (l *limiter) take(key string, every rate.Limit, burst int, keep bool) (bool, int, int) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.sweep) > 10*time.Minute {
		for k, b := range l.buckets {
			// Only a full bucket may go: it is what a new one would be.
			// Dropping one still refilling would hand back its burst
			// (sign-ups refill one every 12 minutes).
			if now.Sub(b.touched) > 10*time.Minute && b.lim.TokensAt(now) >= float64(b.burst) {
				delete(l.buckets, k)
			}
		}
		l.sweep = now
	}
	b := l.buckets[key]
	if b == nil || !keep && (b.every != every || b.burst != burst) {
		b = &bucket{lim: rate.NewLimiter(every, burst), every: every, burst: burst}
		l.buckets[key] = b
	}
	b.touched = now
	res := b.lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return false, int(math.Ceil(d.Seconds())), b.burst
	}
	return true, 0, b.burst
}
