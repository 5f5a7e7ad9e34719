package api

import (
	"net/http"
	"net/url"
	"time"

	"golang.org/x/time/rate"

	"github.com/mdpress/mdpress/core/apierr"
)

// signup creates an account for the dashboard and shows its key once.
// It is bounded per client address so it cannot mint accounts in bulk.
func (s *Server) signup(w http.ResponseWriter, r *http.Request) {
	if crossSite(r) {
		// Another site's page posting here would mint accounts from its
		// visitors' addresses, past the per-address bound.
		writeError(w, apierr.New(http.StatusForbidden, apierr.NameForbidden, "sign-up is only possible from the dashboard"))
		return
	}
	ip := clientAddr(r, s.opt.TrustedProxies)
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

// crossSite reports whether a browser sent r from another site's page: by
// Sec-Fetch-Site where the browser sends it, else by an Origin that names
// another host. Requests without either (curl, scripts) are not a
// browser's on someone else's behalf.
func crossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return false
	case "same-site", "cross-site":
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || u.Host != r.Host
}
