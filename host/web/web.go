// Package web serves the dashboard: sign-up instructions, the API key
// shown once, and a playground that posts Markdown to the API.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Handler serves the embedded dashboard.
func Handler() http.Handler {
	sub, _ := fs.Sub(static, "static")
	fsrv := http.FileServer(http.FS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// No framing by other sites (a framed sign-up button could be
		// clicked for the visitor), no <base> or form targets elsewhere.
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-src 'self' blob:; object-src 'self' blob:; "+
			"frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		fsrv.ServeHTTP(w, r)
	})
}
