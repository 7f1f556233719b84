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
// connection is then closed. A large JSON body reserves what reading it
// costs from the decode budget (memory.go) before it is read: at once when
// its length is declared, as it arrives otherwise.
func (s *Server) limitBodies(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		limit, flag := s.cfg.MaxJSONBody, flagMaxJSONBody
		arrowBody := false
		if op := s.ops.lookup(c); op != nil && op.body == bodyArrow {
			limit, flag, arrowBody = s.cfg.MaxArrowBody, flagMaxArrowBody, true
		}
		if req.ContentLength > limit {
			return bodyTooLarge(limit, flag)
		}
		if req.Body == nil || req.Body == http.NoBody {
			return next(c)
		}
		body := http.MaxBytesReader(c.Response().Writer, req.Body, limit)
		req.Body = body
		if !arrowBody {
			if req.ContentLength >= 0 {
				if err := s.reserveJSON(c, req.ContentLength); err != nil {
					return err
				}
			} else {
				req.Body = &reservingBody{ReadCloser: body, s: s, c: c}
			}
		}
		err := next(c)
		_, _ = io.Copy(io.Discard, body)
		return err
	}
}

// reservingBody is a JSON body of undeclared length: it reserves what
// reading it costs as its bytes arrive, a mebibyte at a time.
type reservingBody struct {
	io.ReadCloser
	s       *Server
	c       echo.Context
	read    int64 // bytes read
	covered int64 // bytes whose cost is reserved
}

// Read implements io.Reader; a refused reservation is its error.
func (b *reservingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if b.read > b.covered && b.read > smallJSONBody {
		next := (b.read + 1<<20 - 1) &^ (1<<20 - 1)
		if rerr := b.s.reserveJSON(b.c, next-b.covered); rerr != nil {
			return n, rerr
		}
		b.covered = next
	}
	return n, err
}
