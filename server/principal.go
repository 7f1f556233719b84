package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/auth"
)

// PrincipalPath answers who a request's credentials stand for and what
// they may do, for clients that adapt to it (the web console shows write
// controls only where the principal may write). It lives outside /v1 and
// the spec, and needs the same credentials as the API: a server with none
// configured answers the anonymous admin every request acts as.
const PrincipalPath = "/auth/principal"

// routePrincipal is the route's label in the metrics and in refusals.
const routePrincipal = "DescribePrincipal"

// principalAnswer is the answer of GET /auth/principal.
type principalAnswer struct {
	// Principal names the principal as logs do: a key's name, "jwt:" and
	// a token's subject, or "anonymous".
	Principal string `json:"principal"`
	// Role is read, write or admin (none for a token without a role).
	Role string `json:"role"`
	// Scoped says whether the principal is confined to Scopes, the
	// namespaces (their names joined with "$") it may touch with
	// everything under them; an unscoped principal may touch every
	// namespace its role allows.
	Scoped bool     `json:"scoped"`
	Scopes []string `json:"scopes"`
	// CredentialsRequired says whether the server needs credentials at all.
	CredentialsRequired bool `json:"credentials_required"`
}

// DescribePrincipal handles GET /auth/principal (see PrincipalPath):
// inside a routed database, the principal as confined to it.
func (s *Server) DescribePrincipal(c echo.Context) error {
	p, _ := principalOf(c)
	out := principalAnswer{Principal: p.Name, Role: p.Role.String(), Scoped: p.Scoped, Scopes: []string{},
		CredentialsRequired: s.auth.Enabled()}
	for _, sc := range p.Scopes {
		out.Scopes = append(out.Scopes, strings.Join(sc, auth.ScopeDelimiter))
	}
	return c.JSON(http.StatusOK, out)
}
