package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/lancens/lancens/store"
)

// The signature algorithms accepted. Listing them is what keeps out
// "alg: none" and HMAC tokens signed with a public key as the secret.
var jwtAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256}

const (
	// jwksMaxAge is how long fetched keys are used before they are fetched
	// again (keys the issuer withdrew stop working by then).
	jwksMaxAge = time.Hour
	// jwksMinRefresh is the default least time between two fetches caused
	// by unknown key ids, so that tokens with made-up ids cannot make
	// lancens hammer the issuer.
	jwksMinRefresh = 10 * time.Second
	// jwksMaxBytes bounds a JWKS document.
	jwksMaxBytes = 1 << 20
	// jwtLeeway is the clock skew allowed on exp and nbf.
	jwtLeeway = time.Minute
)

// jwtVerifier checks bearer tokens against the issuer's JWKS, which it
// fetches on first use, keeps for jwksMaxAge, and fetches again early
// when a token names a key id it does not know.
type jwtVerifier struct {
	cfg    JWTConfig
	client *http.Client
	now    func() time.Time

	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetched time.Time // when keys were fetched; zero: never
	tried   time.Time // when a fetch was last tried
	// fetchErr is why the last fetch failed.
	fetchErr error
	// inflight, while a fetch runs, is closed when it ends.
	inflight chan struct{}
}

func newJWTVerifier(cfg JWTConfig, client *http.Client) *jwtVerifier {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.MinRefresh == 0 {
		cfg.MinRefresh = jwksMinRefresh
	}
	return &jwtVerifier{cfg: cfg, client: client, now: time.Now}
}

// verify checks token and returns its principal. Returns Unauthenticated
// (16) for a token that is malformed, uses another algorithm, is signed by
// no key of the JWKS, is expired or not yet valid, lacks exp, or names
// another issuer or audience; ServiceUnavailable (17) when no keys could
// be fetched at all.
func (v *jwtVerifier) verify(ctx context.Context, token string) (Principal, error) {
	tok, err := jwt.ParseSigned(token, jwtAlgorithms)
	if err != nil || len(tok.Headers) != 1 {
		return Principal{}, unauthenticated("the bearer token is not a JWT signed with RS256 or ES256")
	}
	h := tok.Headers[0]
	keys, err := v.keysFor(ctx, h.KeyID)
	if err != nil {
		return Principal{}, err
	}
	var std jwt.Claims
	var custom map[string]json.RawMessage
	verified := false
	for _, k := range keys {
		if !usable(k, h.Algorithm) {
			continue
		}
		if tok.Claims(k.Key, &std, &custom) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return Principal{}, unauthenticated("the bearer token's signature does not verify with the issuer's keys")
	}
	if std.Expiry == nil {
		return Principal{}, unauthenticated("the bearer token has no expiry (exp)")
	}
	expected := jwt.Expected{Issuer: v.cfg.Issuer, AnyAudience: jwt.Audience{v.cfg.Audience}, Time: v.now()}
	switch err := std.ValidateWithLeeway(expected, jwtLeeway); {
	case errors.Is(err, jwt.ErrExpired):
		return Principal{}, unauthenticated("the bearer token has expired")
	case errors.Is(err, jwt.ErrNotValidYet):
		return Principal{}, unauthenticated("the bearer token is not valid yet")
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return Principal{}, unauthenticated("the bearer token is from another issuer")
	case errors.Is(err, jwt.ErrInvalidAudience):
		return Principal{}, unauthenticated("the bearer token is for another audience")
	case err != nil:
		return Principal{}, unauthenticated("the bearer token's claims are not valid: " + err.Error())
	}
	p := Principal{Name: "jwt", Role: strongestRole(custom[v.cfg.RoleClaim])}
	if std.Subject != "" {
		p.Name = "jwt:" + std.Subject
	}
	if v.cfg.NamespacesClaim != "" {
		if raw, ok := custom[v.cfg.NamespacesClaim]; ok {
			scopes, err := claimScopes(raw)
			if err != nil {
				return Principal{}, unauthenticated(fmt.Sprintf("the bearer token's %s claim: %v", v.cfg.NamespacesClaim, err))
			}
			p.Scoped, p.Scopes = true, scopes
		}
	}
	if v.cfg.LocationsClaim != "" {
		if raw, ok := custom[v.cfg.LocationsClaim]; ok {
			locations, err := claimLocations(raw)
			if err != nil {
				return Principal{}, unauthenticated(fmt.Sprintf("the bearer token's %s claim: %v", v.cfg.LocationsClaim, err))
			}
			p.Locations = locations
		}
	}
	return p, nil
}

// claimLocations reads a locations claim: a list of absolute paths or
// URIs, or one. Returns an error for another shape or a relative path.
func claimLocations(raw json.RawMessage) ([]string, error) {
	var list []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		list = []string{one}
	} else if json.Unmarshal(raw, &list) != nil {
		return nil, errors.New("want a list of locations")
	}
	for _, l := range list {
		if err := checkLocation(l); err != nil {
			return nil, err
		}
	}
	return list, nil
}

func unauthenticated(msg string) error {
	return store.Errorf(store.CodeUnauthenticated, "%s", msg)
}

// usable reports whether k is a public signature key that may verify a
// token signed with alg.
func usable(k jose.JSONWebKey, alg string) bool {
	if (k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && k.Algorithm != alg) {
		return false
	}
	switch k.Key.(type) {
	case *rsa.PublicKey:
		return alg == string(jose.RS256)
	case *ecdsa.PublicKey:
		return alg == string(jose.ES256)
	}
	return false
}

// strongestRole reads a role claim: one role name, or a list of which the
// strongest known one counts. Anything else grants RoleNone.
func strongestRole(raw json.RawMessage) Role {
	var names []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		names = []string{one}
	} else if json.Unmarshal(raw, &names) != nil {
		return RoleNone
	}
	best := RoleNone
	for _, n := range names {
		if r, err := ParseRole(n); err == nil && r > best {
			best = r
		}
	}
	return best
}

// claimScopes reads a namespaces claim: a list of "$"-joined identifiers,
// or one. Returns an error for another shape or an empty scope.
func claimScopes(raw json.RawMessage) ([][]string, error) {
	var list []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		list = []string{one}
	} else if json.Unmarshal(raw, &list) != nil {
		return nil, errors.New("want a list of namespace identifiers")
	}
	scopes := [][]string{}
	for _, s := range list {
		scope, err := ParseScope(s)
		if err != nil {
			return nil, err
		}
		scopes = append(scopes, scope)
	}
	return scopes, nil
}

// keysFor returns the keys that may have signed a token with key id kid
// (every key when kid is empty). Keys older than jwksMaxAge, or a kid the
// keys lack, make it fetch the JWKS again, at most once per MinRefresh and
// one fetch at a time. Requests that need the fetch wait for it; others go
// on with the keys at hand. Returns ServiceUnavailable (17) while no fetch
// has succeeded yet, and the context's error if it ends while waiting.
func (v *jwtVerifier) keysFor(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	v.mu.Lock()
	now := v.now()
	found := matching(v.keys, kid)
	stale := v.fetched.IsZero() || now.Sub(v.fetched) > jwksMaxAge
	switch {
	case !stale && len(found) > 0:
	case v.inflight == nil && (v.tried.IsZero() || now.Sub(v.tried) >= v.cfg.MinRefresh):
		v.tried = now
		done := make(chan struct{})
		v.inflight = done
		v.mu.Unlock()
		keys, err := v.fetch(ctx)
		v.mu.Lock()
		if err == nil {
			v.keys, v.fetched = keys, now
		} else {
			v.fetchErr = err
		}
		v.inflight = nil
		close(done)
	case v.inflight != nil && len(found) == 0:
		wait := v.inflight
		v.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		v.mu.Lock()
	}
	defer v.mu.Unlock()
	if v.fetched.IsZero() {
		// The cause (the JWKS address, what went wrong reaching it) is for
		// the server's log, not for an unauthenticated caller.
		return nil, &store.Error{Code: store.CodeServiceUnavailable, Message: "cannot check bearer tokens: the issuer's keys could not be fetched", Cause: v.fetchErr}
	}
	return matching(v.keys, kid), nil
}

func matching(keys []jose.JSONWebKey, kid string) []jose.JSONWebKey {
	if kid == "" {
		return keys
	}
	var out []jose.JSONWebKey
	for _, k := range keys {
		if k.KeyID == kid {
			out = append(out, k)
		}
	}
	return out
}

// fetch downloads and parses the JWKS. Returns an error for a failed
// request, a status other than 200, or a document that is not a JWKS.
func (v *jwtVerifier) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.cfg.JWKSURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	res, err := v.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d", v.cfg.JWKSURL, res.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, jwksMaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > jwksMaxBytes {
		return nil, fmt.Errorf("GET %s: the JWKS is larger than %d bytes", v.cfg.JWKSURL, jwksMaxBytes)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("GET %s: not a JWKS: %w", v.cfg.JWKSURL, err)
	}
	// A key of a type this library does not read (a newer algorithm) must
	// not make the others unusable: each key is read on its own.
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if k.UnmarshalJSON(raw) == nil {
			keys = append(keys, k)
		}
	}
	return keys, nil
}
