package server

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// Namespace scopes cover storage too. A table's location is a claim on the
// files there, and on every place inside it (two tables never nest), so a
// principal that could place a table anywhere in the warehouse could block
// another namespace's tables, or be handed credentials for its files. An
// admin places tables anywhere. Any other principal may choose a location
// (declare with a location, register) only
//
//   - strictly inside the warehouse directory of a namespace it covers (the
//     layout is <root>/<namespace…>/<table>, see
//     warehouse.NamespaceLocation; an unscoped principal covers them all),
//     or strictly inside a location the access-control file grants it
//     (auth.KeyConfig.Locations, on --external-root prefixes), and
//   - not where a dropped, deregistered or replaced table of a namespace it
//     may not write lay (at, inside or around that location: the catalog
//     remembers, see store.LocationHistory), so that dropping a table does
//     not hand its files to whoever registers there next.
//
// Locations the server allocates (declare without one) lie in the table's
// own namespace directory and are not checked. Vended credentials follow
// the same rule: read-write only for a location the principal could have
// chosen, or that lies directly in its table's namespace directory (where
// the server allocates), read-only otherwise.

// checkPlacement returns PermissionDenied (15) when the request's
// principal may not place table id at location (resolved, chosen by the
// client; see above), and the store's error when its history cannot be
// read.
func (s *Server) checkPlacement(c echo.Context, id []string, location string) error {
	p, ok := principalOf(c)
	if !ok || p.May(auth.RoleAdmin) {
		return nil
	}
	if !s.inReach(p, location) {
		return denied(p, fmt.Sprintf("place table %s at %s, which lies outside the warehouse directories of its namespaces and the locations granted to it",
			displayID(id), location))
	}
	if !p.Scoped {
		return nil // an unscoped writer may write every namespace
	}
	owners, err := s.cfg.Store.ReleasedLocationNamespaces(c.Request().Context(), location)
	if err != nil {
		return err
	}
	for _, ns := range owners {
		if !p.Covers(ns) {
			return denied(p, fmt.Sprintf("place table %s at %s, where a table of namespace %s lay", displayID(id), location, displayID(ns)))
		}
	}
	return nil
}

// inReach reports whether non-admin principal p may choose location: it
// lies strictly inside a location granted to p, or inside the warehouse
// directory of a namespace p covers.
func (s *Server) inReach(p auth.Principal, location string) bool {
	key := store.LocationKey(location)
	for _, g := range p.Locations {
		if strictlyInside(key, store.LocationKey(resolveGrant(g))) {
			return true
		}
	}
	if !p.Scoped {
		return strictlyInside(key, store.LocationKey(s.warehouse.Root()))
	}
	for _, scope := range p.Scopes {
		if strictlyInside(key, store.LocationKey(s.warehouse.NamespaceLocation(scope))) {
			return true
		}
	}
	return false
}

// vendsWrite reports whether principal p, which may write table id, gets
// read-write credentials for the table's location (see above).
func (s *Server) vendsWrite(p auth.Principal, id []string, location string) bool {
	if p.May(auth.RoleAdmin) || s.inReach(p, location) {
		return true
	}
	if len(id) == 0 {
		return false
	}
	key := store.LocationKey(location)
	parent := key[:strings.LastIndexByte(strings.TrimSuffix(key, "/"), '/')+1]
	return parent == store.LocationKey(s.warehouse.NamespaceLocation(id[:len(id)-1]))
}

// strictlyInside reports whether location key lies inside dir, another
// key, and is not dir itself.
func strictlyInside(key, dir string) bool {
	return key != dir && strings.HasPrefix(key, dir)
}

// resolveGrant returns a granted location as table locations are
// recorded: a local path (or file:// URI) with its symbolic links resolved
// when it exists, a URI as it is.
func resolveGrant(g string) string {
	p, local := warehouse.LocalPath(g)
	if !local {
		return g
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}
