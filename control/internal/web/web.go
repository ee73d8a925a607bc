// Package web is the live fabric page (docs/operations.md, "The fabric
// page"): plain HTML, CSS and JavaScript drawing the topology with
// cytoscape.js, which is vendored from the npm registry at the version
// package-lock.json pins (`make` puts it in static/vendor, so the page
// works offline). The controller serves it under /ui/. The files hold no
// data: the page reads the API with the token the operator gives it.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Handler serves the page's files under /ui/.
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	files := http.StripPrefix("/ui/", http.FileServer(http.FS(sub)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		// Only our own files, and the API of the origin they came from.
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		files.ServeHTTP(w, r)
	})
}
