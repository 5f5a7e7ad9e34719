// Package web serves the dashboard: sign-up instructions, the API key
// shown once, and a playground that posts Markdown to the API.
package web

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"time"
)

// static holds the assets served as they are; the page is a template
// kept apart, so that no spelling of its path serves it unrendered.
//
//go:embed static
var static embed.FS

//go:embed index.html
var pageFS embed.FS

// page is the dashboard's one HTML page; it says whether sign-up is
// possible here and on which plan, which only the config knows.
var page = template.Must(template.ParseFS(pageFS, "index.html"))

// Option configures the dashboard.
type Option func(*settings)

type settings struct {
	signupPlan string // "": sign-up is off
}

// WithSignup offers self-service sign-up on the named plan. Without it
// the page tells visitors to ask the operator for a key, rather than show
// a button whose endpoint does not exist.
func WithSignup(plan string) Option { return func(s *settings) { s.signupPlan = plan } }

// Handler serves the embedded dashboard.
func Handler(opts ...Option) http.Handler {
	var s settings
	for _, o := range opts {
		o(&s)
	}
	var index bytes.Buffer
	if err := page.Execute(&index, struct {
		Signup bool
		Plan   string
	}{s.signupPlan != "", s.signupPlan}); err != nil {
		panic("web: index.html: " + err.Error()) // the embedded template and its data are fixed
	}
	sub, _ := fs.Sub(static, "static")
	fsrv := http.FileServer(http.FS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// No framing by other sites (a framed sign-up button could be
		// clicked for the visitor), no <base> or form targets elsewhere.
		// The playground frames a hosted PDF wherever the sink puts it: a
		// presigned URL is on the bucket's origin, which only the sink
		// knows. No answer's text reaches the page as markup (app.js
		// writes textContent only), so frame-src guards no injection.
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-src 'self' blob: https: http:; object-src 'self' blob:; "+
			"frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		// The router leaves paths unclean ("//", "/./", "/%2e%2e/"):
		// every one that means the page gets the page.
		if p := path.Clean("/" + r.URL.Path); p != "/" && p != "/index.html" {
			fsrv.ServeHTTP(w, r)
			return
		}
		// The page shows a new account's key: neither the HTTP cache nor
		// the back-forward cache may keep it for the next person at the
		// browser (app.js also wipes it when the page is left).
		w.Header().Set("Cache-Control", "no-store")
		http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(index.Bytes()))
	})
}
