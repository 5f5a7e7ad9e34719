package api

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mdpress/mdpress/core/apierr"
)

// dashboardRequest routes to the dashboard the GETs and HEADs outside the
// API: under /v1 an unknown path stays a JSON 404 and a wrong method a
// JSON 405, and other methods anywhere are a JSON 404.
// dashboardRoute labels the dashboard's requests in the metrics: its route
// has no path template.
const dashboardRoute = "dashboard"

func dashboardRequest(r *http.Request, _ *mux.RouteMatch) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	return r.URL.Path != "/v1" && !strings.HasPrefix(r.URL.Path, "/v1/")
}

// dashboardNotFoundJSON answers the dashboard's misses with the API's JSON
// 404, so a client that mistypes a path gets the same error body
// everywhere.
func dashboardNotFoundJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&notFoundWriter{ResponseWriter: w}, r)
	})
}

// notFoundWriter replaces a 404 and its body with notFound's.
type notFoundWriter struct {
	http.ResponseWriter
	replaced bool
}

func (w *notFoundWriter) WriteHeader(code int) {
	if code != http.StatusNotFound {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.replaced = true
	w.Header().Del("Content-Length")
	writeError(w.ResponseWriter, notFound())
}

func (w *notFoundWriter) Write(b []byte) (int, error) {
	if w.replaced {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *notFoundWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func notFound() *apierr.Error {
	return apierr.New(http.StatusNotFound, apierr.NameNotFound, "no such endpoint").
		WithHint("see /v1/openapi.json for the API")
}
