package server

import (
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// uploads tracks the request bodies being received, so that a shutdown can
// cut off clients that send slowly instead of waiting for them.
type uploads struct {
	mu       sync.Mutex
	stopping bool
	active   map[*upload]struct{}
}

// upload is a request body being received; rc sets the read deadline of its
// connection.
type upload struct {
	rc    *http.ResponseController
	body  io.ReadCloser
	owner *uploads
	done  bool
}

// Read implements io.Reader; the upload leaves the tracked set at the end
// of the body or at the first error.
func (u *upload) Read(p []byte) (int, error) {
	n, err := u.body.Read(p)
	if err != nil {
		u.owner.remove(u)
	}
	return n, err
}

// Close implements io.Closer.
func (u *upload) Close() error {
	u.owner.remove(u)
	return u.body.Close()
}

func (t *uploads) remove(u *upload) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !u.done {
		u.done = true
		delete(t.active, u)
	}
}

// trackUploads registers the body of every request that has one until it
// is read to its end or the handler returns. Once the server is stopping,
// a new body fails at once.
func (s *Server) trackUploads(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Body == nil || req.Body == http.NoBody {
			return next(c)
		}
		u := &upload{rc: http.NewResponseController(c.Response().Writer), body: req.Body, owner: &s.uploads}
		s.uploads.mu.Lock()
		if s.uploads.stopping {
			_ = u.rc.SetReadDeadline(time.Now())
		}
		if s.uploads.active == nil {
			s.uploads.active = map[*upload]struct{}{}
		}
		s.uploads.active[u] = struct{}{}
		s.uploads.mu.Unlock()
		defer s.uploads.remove(u)
		req.Body = u
		return next(c)
	}
}

// StopReading cuts off the request bodies still being received: their next
// read fails at once, and so do the reads of bodies that arrive later; such
// a request fails as one whose body broke off. Requests whose bodies are in
// already run to their end. Call it when the HTTP server starts to shut
// down (http.Server.RegisterOnShutdown), so that a client trickling a body
// cannot hold the shutdown.
func (s *Server) StopReading() {
	s.uploads.mu.Lock()
	defer s.uploads.mu.Unlock()
	s.uploads.stopping = true
	for u := range s.uploads.active {
		_ = u.rc.SetReadDeadline(time.Now())
	}
}
