package server

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// Cross-origin resource sharing, for browser clients on other origins.
var (
	corsAllowMethods = strings.Join([]string{http.MethodGet, http.MethodPost, http.MethodHead}, ", ")
	// corsAllowHeaders are the request headers the API reads.
	corsAllowHeaders = strings.Join([]string{"Accept", "Authorization", "Content-Type", "X-Api-Key",
		headerRequestID, "X-Lancedb-Database", "X-Request-Timeout-Ms"}, ", ")
	// corsExposeHeaders are the response headers a script may read.
	corsExposeHeaders = strings.Join([]string{headerRequestID, headerTableVersion, headerDeletedRows, "Phalanx-Version"}, ", ")
)

// corsMaxAge is how long, in seconds, a browser may reuse a preflight's answer.
const corsMaxAge = "600"

// allowOrigins answers cross-origin requests from origins (exact
// "scheme://host[:port]" strings, or "*" for any): a preflight (OPTIONS
// with Access-Control-Request-Method) is answered 204 at once, before
// authentication, as browsers send it without credentials; other requests
// go on with the headers that let the browser hand the answer to the
// script. A request from any other origin gets no CORS headers, so the
// browser keeps the answer from the script.
func allowOrigins(origins []string) echo.MiddlewareFunc {
	anyOrigin := slices.Contains(origins, "*")
	allowed := map[string]bool{}
	for _, o := range origins {
		allowed[strings.TrimSuffix(o, "/")] = true
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			origin := req.Header.Get(echo.HeaderOrigin)
			if origin == "" {
				return next(c)
			}
			h := c.Response().Header()
			h.Add(echo.HeaderVary, echo.HeaderOrigin)
			if !anyOrigin && !allowed[origin] {
				return next(c)
			}
			if anyOrigin {
				h.Set(echo.HeaderAccessControlAllowOrigin, "*")
			} else {
				h.Set(echo.HeaderAccessControlAllowOrigin, origin)
			}
			if req.Method == http.MethodOptions && req.Header.Get(echo.HeaderAccessControlRequestMethod) != "" {
				h.Set(echo.HeaderAccessControlAllowMethods, corsAllowMethods)
				h.Set(echo.HeaderAccessControlAllowHeaders, corsAllowHeaders)
				h.Set(echo.HeaderAccessControlMaxAge, corsMaxAge)
				return c.NoContent(http.StatusNoContent)
			}
			h.Set(echo.HeaderAccessControlExposeHeaders, corsExposeHeaders)
			return next(c)
		}
	}
}
