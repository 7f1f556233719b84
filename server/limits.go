package server

import (
	"context"
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/store"
)

// page returns the store page a listing asks for. Without a limit (or with
// one of 0 or less) the page holds the default number of items, at most
// Config.MaxPageSize. Returns InvalidInput (13) for a limit above
// Config.MaxPageSize.
func (s *Server) page(token *string, limit *int) (store.Page, error) {
	n := deref(limit)
	if n > s.cfg.MaxPageSize {
		return store.Page{}, invalidInput("limit %d is larger than this server's largest page of %d items; ask for at most %d and follow page_token",
			n, s.cfg.MaxPageSize, s.cfg.MaxPageSize)
	}
	if n <= 0 {
		n = min(store.DefaultPageSize, s.cfg.MaxPageSize)
	}
	return store.Page{Token: deref(token), Limit: n}, nil
}

// queryOperations are the operations Config.QueryTimeout bounds.
var queryOperations = map[string]bool{
	"QueryTable": true, "CountTableRows": true, "ExplainTableQueryPlan": true, "AnalyzeTableQueryPlan": true,
}

// limitQueryTime runs the query operations under a context deadline of
// Config.QueryTimeout. A query the deadline stops answers
// ServiceUnavailable (17) saying so, whatever error the store returned on
// the way out.
func (s *Server) limitQueryTime(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		op := s.ops.lookup(c)
		if s.cfg.QueryTimeout < 0 || op == nil || !queryOperations[op.id] {
			return next(c)
		}
		req := c.Request()
		ctx, cancel := context.WithTimeout(req.Context(), s.cfg.QueryTimeout)
		defer cancel()
		c.SetRequest(req.WithContext(ctx))
		err := next(c)
		// Later middleware reads the client's own context: a cancellation
		// there means the client went away.
		c.SetRequest(req)
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && req.Context().Err() == nil {
			return &store.Error{Code: store.CodeServiceUnavailable, Cause: err,
				Message: "the query did not finish within this server's query timeout of " + s.cfg.QueryTimeout.String()}
		}
		return err
	}
}
