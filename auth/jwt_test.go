package auth_test

import (
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/internal/testkit/authtest"
	"github.com/lancens/lancens/store"
)

func jwtConfig(url string, minRefresh time.Duration) *auth.Config {
	return &auth.Config{JWT: &auth.JWTConfig{JWKSURL: url, Issuer: authtest.Issuer, Audience: authtest.Audience,
		RoleClaim: "lancens_role", NamespacesClaim: "lancens_namespaces", MinRefresh: minRefresh}}
}

// TestJWT verifies tokens against a JWKS served by httptest: good RS256
// and ES256 tokens find their principal (role and scopes from the
// configured claims); every kind of bad token is Unauthenticated (16).
func TestJWT(t *testing.T) {
	rsaKey := authtest.NewRSAKey(t, "rsa-1")
	ecKey := authtest.NewECKey(t, "ec-1")
	unpublished := authtest.NewRSAKey(t, "rsa-1") // same kid, other key: a forgery
	jwks := authtest.ServeJWKS(t, rsaKey, ecKey)
	a, err := auth.New(jwtConfig(jwks.URL, time.Hour), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	write := map[string]any{"lancens_role": "write", "lancens_namespaces": []string{"alpha", "beta$team"}}
	claims := authtest.Claims("alice")
	with := func(edit func(*jwt.Claims)) jwt.Claims {
		c := authtest.Claims("alice")
		edit(&c)
		return c
	}
	rsaPublic, err := x509.MarshalPKIXPublicKey(rsaKey.Private.Public())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		token  string
		role   auth.Role
		scopes [][]string // nil: unscoped
		code   store.Code
	}{
		{"GoodRS256", authtest.Mint(t, rsaKey, claims, write), auth.RoleWrite, [][]string{{"alpha"}, {"beta", "team"}}, -1},
		{"GoodES256", authtest.Mint(t, ecKey, claims, map[string]any{"lancens_role": "read"}), auth.RoleRead, nil, -1},
		{"RoleList", authtest.Mint(t, ecKey, claims, map[string]any{"lancens_role": []string{"viewer", "admin", "read"}}), auth.RoleAdmin, nil, -1},
		{"OneNamespace", authtest.Mint(t, ecKey, claims, map[string]any{"lancens_role": "read", "lancens_namespaces": "alpha"}), auth.RoleRead, [][]string{{"alpha"}}, -1},
		{"NoNamespaces", authtest.Mint(t, ecKey, claims, map[string]any{"lancens_role": "read", "lancens_namespaces": []string{}}), auth.RoleRead, [][]string{}, -1},
		{"NoRole", authtest.Mint(t, rsaKey, claims, nil), auth.RoleNone, nil, -1},
		{"UnknownRole", authtest.Mint(t, rsaKey, claims, map[string]any{"lancens_role": "owner"}), auth.RoleNone, nil, -1},
		{"MultipleAudiences", authtest.Mint(t, rsaKey, with(func(c *jwt.Claims) { c.Audience = jwt.Audience{"other", authtest.Audience} }), write),
			auth.RoleWrite, [][]string{{"alpha"}, {"beta", "team"}}, -1},
		{"WithinLeeway", authtest.Mint(t, rsaKey, with(func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(time.Now().Add(-20 * time.Second)) }), write),
			auth.RoleWrite, [][]string{{"alpha"}, {"beta", "team"}}, -1},
		{"Expired", authtest.Mint(t, rsaKey, with(func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(time.Now().Add(-time.Hour)) }), write), 0, nil, store.CodeUnauthenticated},
		{"NotYetValid", authtest.Mint(t, rsaKey, with(func(c *jwt.Claims) { c.NotBefore = jwt.NewNumericDate(time.Now().Add(time.Hour)) }), write), 0, nil, store.CodeUnauthenticated},
		{"NoExpiry", authtest.Mint(t, rsaKey, with(func(c *jwt.Claims) { c.Expiry = nil }), write), 0, nil, store.CodeUnauthenticated},
		{"WrongAudience", authtest.Mint(t, rsaKey, with(func(c *jwt.Claims) { c.Audience = jwt.Audience{"someone-else"} }), write), 0, nil, store.CodeUnauthenticated},
		{"NoAudience", authtest.Mint(t, rsaKey, with(func(c *jwt.Claims) { c.Audience = nil }), write), 0, nil, store.CodeUnauthenticated},
		{"WrongIssuer", authtest.Mint(t, rsaKey, with(func(c *jwt.Claims) { c.Issuer = "https://evil.test" }), write), 0, nil, store.CodeUnauthenticated},
		{"ForgedSignature", authtest.Mint(t, unpublished, claims, write), 0, nil, store.CodeUnauthenticated},
		{"UnknownKid", authtest.Mint(t, authtest.NewECKey(t, "nobody"), claims, write), 0, nil, store.CodeUnauthenticated},
		{"AlgNone", authtest.MintUnsigned(t, "rsa-1", claims, write), 0, nil, store.CodeUnauthenticated},
		{"HMACWithPublicKey", authtest.MintHMAC(t, "rsa-1", rsaPublic, claims, write), 0, nil, store.CodeUnauthenticated},
		{"TamperedPayload", tamper(authtest.Mint(t, rsaKey, claims, map[string]any{"lancens_role": "read"}),
			authtest.MintUnsigned(t, "rsa-1", claims, map[string]any{"lancens_role": "admin"})), 0, nil, store.CodeUnauthenticated},
		{"BadNamespacesClaim", authtest.Mint(t, rsaKey, claims, map[string]any{"lancens_role": "read", "lancens_namespaces": []string{"alpha$"}}), 0, nil, store.CodeUnauthenticated},
		{"NotAJWT", "a.b.c", 0, nil, store.CodeUnauthenticated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := a.Authenticate(t.Context(), auth.Credentials{Bearer: tc.token})
			if tc.code >= 0 {
				if store.ErrorCode(err) != tc.code {
					t.Fatalf("want code %d, got principal %+v, error %v", tc.code, p, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != "jwt:alice" || p.Role != tc.role || p.Scoped != (tc.scopes != nil) || !slices.EqualFunc(p.Scopes, tc.scopes, slices.Equal) {
				t.Fatalf("got %+v, want role %v scopes %q", p, tc.role, tc.scopes)
			}
		})
	}
	if n := jwks.Fetches(); n != 1 {
		t.Errorf("the JWKS was fetched %d times; with a long refresh interval, unknown key ids must not fetch it again", n)
	}
}

// tamper returns signed with its payload replaced by other's.
func tamper(signed, other string) string {
	s := splitToken(signed)
	o := splitToken(other)
	return s[0] + "." + o[1] + "." + s[2]
}

func splitToken(tok string) [3]string {
	var out [3]string
	i := 0
	for j := range out {
		k := i
		for k < len(tok) && tok[k] != '.' {
			k++
		}
		out[j] = tok[i:k]
		i = k + 1
	}
	return out
}

// TestJWKSRotation: a token signed by a key the cached JWKS does not hold
// makes the verifier fetch the JWKS again (a key rotation), at most once
// per refresh interval.
func TestJWKSRotation(t *testing.T) {
	old := authtest.NewRSAKey(t, "2026-01")
	next := authtest.NewECKey(t, "2026-02")
	jwks := authtest.ServeJWKS(t, old)
	a, err := auth.New(jwtConfig(jwks.URL, time.Nanosecond), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	role := map[string]any{"lancens_role": "read"}
	if _, err := a.Authenticate(t.Context(), auth.Credentials{Bearer: authtest.Mint(t, old, authtest.Claims("a"), role)}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(t.Context(), auth.Credentials{Bearer: authtest.Mint(t, next, authtest.Claims("a"), role)}); store.ErrorCode(err) != store.CodeUnauthenticated {
		t.Fatalf("a key not yet published: want code 16, got %v", err)
	}
	jwks.Publish(old, next)
	before := jwks.Fetches()
	p, err := a.Authenticate(t.Context(), auth.Credentials{Bearer: authtest.Mint(t, next, authtest.Claims("b"), role)})
	if err != nil || p.Name != "jwt:b" {
		t.Fatalf("after the rotation: got %+v, %v", p, err)
	}
	if jwks.Fetches() != before+1 {
		t.Fatalf("fetches: %d, then %d; want one more", before, jwks.Fetches())
	}
	// A known key is served from the cache.
	if _, err := a.Authenticate(t.Context(), auth.Credentials{Bearer: authtest.Mint(t, old, authtest.Claims("a"), role)}); err != nil || jwks.Fetches() != before+1 {
		t.Fatalf("known key: %v, fetches %d", err, jwks.Fetches())
	}
	// A withdrawn key stops working once the JWKS is fetched again.
	jwks.Publish(next)
	if _, err := a.Authenticate(t.Context(), auth.Credentials{Bearer: authtest.Mint(t, authtest.NewRSAKey(t, "other"), authtest.Claims("a"), role)}); store.ErrorCode(err) != store.CodeUnauthenticated {
		t.Fatalf("unknown key: %v", err)
	}
	if _, err := a.Authenticate(t.Context(), auth.Credentials{Bearer: authtest.Mint(t, old, authtest.Claims("a"), role)}); store.ErrorCode(err) != store.CodeUnauthenticated {
		t.Fatalf("withdrawn key: want code 16, got %v", err)
	}
}

// TestJWKSUnavailable: while the JWKS cannot be fetched, tokens cannot be
// checked and the answer is ServiceUnavailable (17), not a verdict on the
// token; API keys keep working.
func TestJWKSUnavailable(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer down.Close()
	cfg := jwtConfig(down.URL, time.Nanosecond)
	cfg.Keys = []auth.KeyConfig{{Name: "k", Key: "k1", Role: "read"}}
	a, err := auth.New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok := authtest.Mint(t, authtest.NewRSAKey(t, "x"), authtest.Claims("a"), nil)
	if _, err := a.Authenticate(t.Context(), auth.Credentials{Bearer: tok}); store.ErrorCode(err) != store.CodeServiceUnavailable {
		t.Fatalf("want code 17, got %v", err)
	}
	if p, err := a.Authenticate(t.Context(), auth.Credentials{Bearer: "k1"}); err != nil || p.Name != "k" {
		t.Fatalf("API key as bearer: %+v, %v", p, err)
	}
}

// TestJWKSConcurrentFirstUse: requests that arrive while the first fetch
// of the JWKS runs wait for it, and it runs once.
func TestJWKSConcurrentFirstUse(t *testing.T) {
	key := authtest.NewECKey(t, "k")
	jwks := authtest.ServeJWKS(t, key)
	jwks.SlowDown(200 * time.Millisecond)
	a, err := auth.New(jwtConfig(jwks.URL, time.Nanosecond), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok := authtest.Mint(t, key, authtest.Claims("a"), map[string]any{"lancens_role": "read"})
	errs := make(chan error, 16)
	for range cap(errs) {
		go func() {
			_, err := a.Authenticate(t.Context(), auth.Credentials{Bearer: tok})
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := jwks.Fetches(); n != 1 {
		t.Errorf("fetched %d times, want 1", n)
	}
}
