package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

const headerRequestID = "X-Request-Id"

// stripTrailingSlash removes one trailing "/" from the path before routing,
// in both the decoded and the escaped form of the URL (Echo's own middleware
// only fixes the decoded one, and routes on the escaped one when it exists).
func stripTrailingSlash(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := c.Request().URL
		if len(u.Path) > 1 && strings.HasSuffix(u.Path, "/") {
			u.Path = strings.TrimSuffix(u.Path, "/")
			if u.RawPath != "" {
				u.RawPath = strings.TrimSuffix(u.RawPath, "/")
			}
		}
		return next(c)
	}
}

// assignRequestID keeps the caller's X-Request-Id or makes one, and echoes it
// on the response.
func assignRequestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(headerRequestID)
		if id == "" || len(id) > 200 {
			var b [16]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
			c.Request().Header.Set(headerRequestID, id)
		}
		c.Response().Header().Set(headerRequestID, id)
		return next(c)
	}
}

func requestID(c echo.Context) string {
	return c.Request().Header.Get(headerRequestID)
}

// statusClientClosed is the status logged for a request whose client went
// away before its answer was sent (nginx's 499); it is never sent.
const statusClientClosed = 499

// clientGone reports whether the client of the request has gone away: the
// server cancels a request's context when its connection closes (or a
// read of it fails, as when a slow body is cut off: that client is still
// there, see enforceBodyRate).
func clientGone(c echo.Context) bool {
	return c.Request().Context().Err() != nil && c.Get(contextBodyTooSlow) == nil
}

// logRequests writes one structured log line per request: at level error
// for an internal error (500), warn for other 5xx answers, info otherwise.
// A request whose client went away before any answer was written is logged
// with status 499 at level info, and its connection is dropped without an
// answer.
func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			// Render the error now so the logged status is the one sent.
			c.Error(err)
		}
		req := c.Request()
		status := c.Response().Status
		abandoned := clientGone(c) && !c.Response().Committed
		level := slog.LevelInfo
		switch {
		case abandoned:
			status = statusClientClosed
		case status == http.StatusInternalServerError:
			level = slog.LevelError
		case status >= 500:
			level = slog.LevelWarn
		}
		s.log.LogAttrs(req.Context(), level, "request",
			slog.String("method", req.Method),
			slog.String("path", req.URL.Path),
			slog.Int("status", status),
			slog.Int64("bytes", c.Response().Size),
			slog.Duration("duration", time.Since(start)),
			slog.String("request_id", requestID(c)),
			logPrincipal(c))
		if abandoned {
			// The documented way to end a handler without an answer.
			panic(http.ErrAbortHandler)
		}
		return nil
	}
}

// recoverPanics turns a panic in a handler into an Internal (18) error and
// logs its stack.
func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				buf := make([]byte, 16<<10)
				buf = buf[:runtime.Stack(buf, false)]
				s.log.ErrorContext(c.Request().Context(), "panic", slog.Any("panic", r),
					slog.String("stack", string(buf)), slog.String("request_id", requestID(c)))
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return next(c)
	}
}

// Read-only routes that clients call with either method: the spec says GET
// for the list routes and POST for the others, but the Lance clients and the
// reference server disagree route by route, so both are accepted.
var (
	getRoutesAlsoPosted = regexp.MustCompile(`^/v1/(namespace/[^/]+/list|namespace/[^/]+/table/list|table)$`)
	postRoutesAlsoGot   = regexp.MustCompile(`^/v1/table/[^/]+/(version/list|stats|count_rows|tags/list|branches/list|index/[^/]+/stats)$`)
)

// aliasMethods rewrites the method of a request to one of those routes to
// the method the spec gives it, before routing.
func aliasMethods(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		path := req.URL.EscapedPath()
		switch {
		case req.Method == http.MethodPost && getRoutesAlsoPosted.MatchString(path):
			req.Method = http.MethodGet
		case req.Method == http.MethodGet && postRoutesAlsoGot.MatchString(path):
			req.Method = http.MethodPost
		}
		return next(c)
	}
}
