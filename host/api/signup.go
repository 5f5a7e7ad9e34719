package api

import (
	"net"
	"net/http"
	"time"

	"golang.org/x/time/rate"

	"github.com/mdpress/mdpress/core/apierr"
)

// signup creates an account for the dashboard and shows its key once.
// It is bounded per client address so it cannot mint accounts in bulk.
func (s *Server) signup(w http.ResponseWriter, r *http.Request) {
	ip, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		ip = r.RemoteAddr
	}
	perHour := max(s.opt.SignupsPerHour, 1)
	if ok, retry := s.limiter.allowRate("signup:"+ip, rate.Every(time.Hour/time.Duration(perHour)), perHour); !ok {
		e := apierr.New(http.StatusTooManyRequests, apierr.NameRateLimited, "too many sign-ups from this address").
			WithHint("try again later")
		e.RetryAfter = retry
		writeError(w, e)
		return
	}
	user, key, err := s.opt.Signup(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"userId": user, "apiKey": key})
}
