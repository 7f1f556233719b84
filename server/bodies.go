package server

import (
	"io"
	"net/http"

	"github.com/labstack/echo/v4"
)

// limitBodies bounds every request body by its route's limit (MaxArrowBody
// for Arrow uploads, MaxJSONBody for everything else) and, once the
// handler is done, reads whatever it left of the body before the error
// answer is written and the connection is reused or closed. Read routes
// ignore bodies they do not need, and a connection closed with unread
// request bytes in its socket is reset by the kernel: a client that sent
// `Connection: close` and a body would then lose the end of its answer.
// A body declared larger than the limit is refused at once (code 13, HTTP
// 413); one that turns out larger is read only up to the limit, and the
// connection is then closed.
func (s *Server) limitBodies(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		limit, flag := s.cfg.MaxJSONBody, flagMaxJSONBody
		if op := s.ops.lookup(c); op != nil && op.body == bodyArrow {
			limit, flag = s.cfg.MaxArrowBody, flagMaxArrowBody
		}
		if req.ContentLength > limit {
			return bodyTooLarge(limit, flag)
		}
		if req.Body == nil || req.Body == http.NoBody {
			return next(c)
		}
		body := http.MaxBytesReader(c.Response().Writer, req.Body, limit)
		req.Body = body
		err := next(c)
		_, _ = io.Copy(io.Discard, body)
		return err
	}
}
