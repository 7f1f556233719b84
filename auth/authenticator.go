package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/lancens/lancens/store"
)

// Authenticator finds the principal behind a request's credentials.
type Authenticator struct {
	keys []key
	jwt  *jwtVerifier
}

// key is an API key as the Authenticator holds it: only its digest.
type key struct {
	digest    [sha256.Size]byte
	principal Principal
}

// New builds an Authenticator from cfg (nil: no file) and the plain admin
// keys of --api-key (named api-key-1, api-key-2, …; role admin, no
// scope). client fetches the JWKS (nil: a client with a 10 s timeout). It
// returns an error when cfg is invalid or an admin key repeats another.
func New(cfg *Config, adminKeys []string, client *http.Client) (*Authenticator, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	all := *cfg
	all.Keys = append([]KeyConfig(nil), cfg.Keys...)
	for i, k := range adminKeys {
		all.Keys = append(all.Keys, KeyConfig{Name: fmt.Sprintf("api-key-%d", i+1), Key: k, Role: "admin"})
	}
	if err := all.Check(); err != nil {
		return nil, err
	}
	a := &Authenticator{}
	for _, k := range all.Keys {
		d, _ := keyDigest(k.Key) // checked above
		role, _ := ParseRole(k.Role)
		p := Principal{Name: k.Name, Role: role, Scoped: k.Namespaces != nil, Locations: k.Locations}
		for _, s := range k.Namespaces {
			scope, _ := ParseScope(s)
			p.Scopes = append(p.Scopes, scope)
		}
		a.keys = append(a.keys, key{digest: d, principal: p})
	}
	if all.JWT != nil {
		a.jwt = newJWTVerifier(*all.JWT, client)
	}
	return a, nil
}

// Enabled reports whether any credentials are configured; without them
// every request is Anonymous.
func (a *Authenticator) Enabled() bool {
	return a != nil && (len(a.keys) > 0 || a.jwt != nil)
}

// Credentials are what a request presents: an x-api-key header, or the
// token of an "Authorization: Bearer" header.
type Credentials struct {
	APIKey string
	Bearer string
}

// Authenticate returns the principal behind creds. An API key is looked
// up among the configured keys; a bearer token that has the shape of a JWT
// is verified as one when JWT is configured, and is otherwise taken as an
// API key. Returns Unauthenticated (16) for missing or invalid
// credentials, and ServiceUnavailable (17) when a token cannot be checked
// because the issuer's keys cannot be fetched.
func (a *Authenticator) Authenticate(ctx context.Context, creds Credentials) (Principal, error) {
	if !a.Enabled() {
		return Anonymous, nil
	}
	switch {
	case creds.APIKey != "":
		return a.matchKey(creds.APIKey)
	case creds.Bearer != "":
		if a.jwt != nil && strings.Count(creds.Bearer, ".") == 2 {
			return a.jwt.verify(ctx, creds.Bearer)
		}
		return a.matchKey(creds.Bearer)
	}
	return Principal{}, store.Errorf(store.CodeUnauthenticated, "missing credentials: send an x-api-key header or an Authorization: Bearer token")
}

// matchKey compares the digest of given with every key's, in time that
// does not depend on which key (if any) matches or on the given key's
// length. Returns Unauthenticated (16) when none matches.
func (a *Authenticator) matchKey(given string) (Principal, error) {
	d := sha256.Sum256([]byte(given))
	match := -1
	for i := range a.keys {
		eq := subtle.ConstantTimeCompare(d[:], a.keys[i].digest[:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return Principal{}, store.Errorf(store.CodeUnauthenticated, "invalid credentials")
	}
	return a.keys[match].principal, nil
}
