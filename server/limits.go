package server

import (
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
