// Package console is lancens' web console: a single-page application of
// plain ES modules, HTML and CSS embedded in the binary and served under
// /console/. It needs no build step and loads nothing from other origins;
// in the browser it talks to the same REST API as every client, with the
// key or token the user enters.
package console

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// Path is where the console is served; Path without its trailing slash
// redirects there.
const Path = "/console/"

//go:embed static
var files embed.FS

// contentSecurityPolicy keeps the page to its own origin: scripts, styles,
// images and API calls all come from the server that served it.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// Files returns the embedded files of the console, rooted at its top
// directory (index.html, the modules, the stylesheet).
func Files() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}

// Handler serves the console: GET and HEAD of Path and the files below it,
// with a content security policy that allows only the server's own origin.
// The bare path without its slash redirects to Path; other methods answer
// 405, unknown files 404.
func Handler() http.Handler {
	static := http.StripPrefix(Path, http.FileServerFS(Files()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Path == strings.TrimSuffix(Path, "/") {
			http.Redirect(w, r, Path, http.StatusMovedPermanently)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		static.ServeHTTP(w, r)
	})
}

// Serves reports whether a request path belongs to the console.
func Serves(path string) bool {
	return path == strings.TrimSuffix(Path, "/") || strings.HasPrefix(path, Path)
}
