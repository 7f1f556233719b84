// Package auth decides who a request comes from: API keys (each with a
// name, a role and optional namespace scopes) and JWT bearer tokens
// verified against an issuer's JWKS. It knows nothing of HTTP routes; the
// server asks it for the Principal behind a request's credentials and then
// decides, with Principal's methods, what that principal may do.
package auth

import (
	"fmt"
	"slices"
	"strings"
)

// Role is what a principal may do: each role includes the ones below it.
type Role int

// The roles, weakest first. RoleNone grants nothing (a token without a
// recognised role claim).
const (
	RoleNone Role = iota
	// RoleRead may describe, list, check existence, query, count and read
	// versions and tags.
	RoleRead
	// RoleWrite may also change data and the catalog inside its scope.
	RoleWrite
	// RoleAdmin may do everything, including creating and dropping
	// top-level namespaces.
	RoleAdmin
)

var roleNames = map[Role]string{RoleNone: "none", RoleRead: "read", RoleWrite: "write", RoleAdmin: "admin"}

func (r Role) String() string {
	if n, ok := roleNames[r]; ok {
		return n
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// ParseRole reads "read", "write" or "admin" (in any case). It returns an
// error naming the value for anything else.
func ParseRole(s string) (Role, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "read":
		return RoleRead, nil
	case "write":
		return RoleWrite, nil
	case "admin":
		return RoleAdmin, nil
	}
	return RoleNone, fmt.Errorf("unknown role %q (read, write or admin)", s)
}

// ScopeDelimiter joins the names of a scope written as one string
// ("alpha$team"), as in the API's identifiers.
const ScopeDelimiter = "$"

// ParseScope reads a scope written as one string: names joined by "$".
// It returns an error for an empty scope or an empty name.
func ParseScope(s string) ([]string, error) {
	if s == "" {
		return nil, fmt.Errorf("empty namespace scope")
	}
	parts := strings.Split(s, ScopeDelimiter)
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("namespace scope %q has an empty name", s)
		}
	}
	return parts, nil
}

// Principal is who a request comes from and what it is granted.
type Principal struct {
	// Name identifies the principal in logs: a key's name, or "jwt:" and a
	// token's subject. Never a secret.
	Name string
	Role Role
	// Scoped limits the principal to Scopes: identifiers (namespaces, or
	// deeper) that it may touch together with everything under them. An
	// unscoped principal may touch everything its role allows.
	Scoped bool
	Scopes [][]string
	// Locations are where, beyond the warehouse directories of its
	// namespaces, the principal may declare or register tables (see
	// KeyConfig.Locations); an admin may anywhere.
	Locations []string
}

// Anonymous is the principal of every request when access control is off.
var Anonymous = Principal{Name: "anonymous", Role: RoleAdmin}

// May reports whether the principal's role includes r.
func (p Principal) May(r Role) bool {
	return p.Role >= r && p.Role > RoleNone
}

// Covers reports whether id lies inside the principal's scopes: some scope
// is id itself or one of its ancestors. Everything is covered for an
// unscoped principal.
func (p Principal) Covers(id []string) bool {
	if !p.Scoped {
		return true
	}
	for _, s := range p.Scopes {
		if len(s) <= len(id) && slices.Equal(s, id[:len(s)]) {
			return true
		}
	}
	return false
}

// Leads reports whether id is a proper ancestor of one of the principal's
// scopes (the root leads to every scope): listing id then shows the way
// to what the principal may touch.
func (p Principal) Leads(id []string) bool {
	if !p.Scoped {
		return false
	}
	for _, s := range p.Scopes {
		if len(id) < len(s) && slices.Equal(s[:len(id)], id) {
			return true
		}
	}
	return false
}

// Sees reports whether a listing may show id: it is covered, or leads to a
// scope.
func (p Principal) Sees(id []string) bool {
	return p.Covers(id) || p.Leads(id)
}

// Within returns the principal confined to namespace prefix (and what lies
// under it): its scopes narrowed to those inside prefix, or prefix itself
// when the principal covers it. The result has no scopes when the
// principal may touch nothing under prefix.
func (p Principal) Within(prefix []string) Principal {
	out := p
	out.Scoped = true
	out.Scopes = nil
	if p.Covers(prefix) {
		out.Scopes = [][]string{slices.Clone(prefix)}
		return out
	}
	for _, s := range p.Scopes {
		if len(s) > len(prefix) && slices.Equal(s[:len(prefix)], prefix) {
			out.Scopes = append(out.Scopes, s)
		}
	}
	return out
}
