// Package authtest is a token issuer for tests: signing keys (RSA and
// ECDSA), a JWKS served over HTTP by httptest, and tokens minted with
// chosen claims and headers, including broken ones.
package authtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer and Audience are the values tokens carry by default.
const (
	Issuer   = "https://issuer.test"
	Audience = "lancens"
)

// Key is a signing key and the id it is published under.
type Key struct {
	ID        string
	Algorithm jose.SignatureAlgorithm
	Private   crypto.Signer
}

// NewRSAKey returns a new RS256 key with id kid.
func NewRSAKey(t testing.TB, kid string) Key {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return Key{ID: kid, Algorithm: jose.RS256, Private: k}
}

// NewECKey returns a new ES256 key with id kid.
func NewECKey(t testing.TB, kid string) Key {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return Key{ID: kid, Algorithm: jose.ES256, Private: k}
}

// JWKS serves the public halves of its keys at URL and counts the
// fetches.
type JWKS struct {
	URL     string
	mu      sync.Mutex
	keys    []Key
	delay   time.Duration
	fetches atomic.Int64
}

// ServeJWKS starts a JWKS server publishing keys; it stops when t ends.
func ServeJWKS(t testing.TB, keys ...Key) *JWKS {
	j := &JWKS{keys: keys}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		j.fetches.Add(1)
		j.mu.Lock()
		delay := j.delay
		j.mu.Unlock()
		time.Sleep(delay)
		j.mu.Lock()
		set := jose.JSONWebKeySet{}
		for _, k := range j.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.Private.Public(), KeyID: k.ID, Algorithm: string(k.Algorithm), Use: "sig"})
		}
		j.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(srv.Close)
	j.URL = srv.URL + "/.well-known/jwks.json"
	return j
}

// Publish replaces the published keys (a key rotation).
func (j *JWKS) Publish(keys ...Key) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.keys = keys
}

// SlowDown makes every answer wait d first.
func (j *JWKS) SlowDown(d time.Duration) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.delay = d
}

// Fetches returns how many times the JWKS was fetched.
func (j *JWKS) Fetches() int64 { return j.fetches.Load() }

// Claims returns the standard claims of a token valid for an hour from now,
// for subject sub.
func Claims(sub string) jwt.Claims {
	now := time.Now()
	return jwt.Claims{Issuer: Issuer, Audience: jwt.Audience{Audience}, Subject: sub,
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)), Expiry: jwt.NewNumericDate(now.Add(time.Hour))}
}

// Mint signs std and extra (custom claims) with k, naming k.ID in the kid
// header.
func Mint(t testing.TB, k Key, std jwt.Claims, extra map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", k.ID)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.Algorithm, Key: k.Private}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(std).Claims(extra).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// MintUnsigned returns a token with "alg": "none" and no signature.
func MintUnsigned(t testing.TB, kid string, std jwt.Claims, extra map[string]any) string {
	t.Helper()
	return unsigned(t, map[string]any{"alg": "none", "typ": "JWT", "kid": kid}, std, extra) + "."
}

// MintHMAC returns a token signed with HS256 using secret, as an attacker
// who takes a published public key for an HMAC secret would.
func MintHMAC(t testing.TB, kid string, secret []byte, std jwt.Claims, extra map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(std).Claims(extra).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func unsigned(t testing.TB, header map[string]any, std jwt.Claims, extra map[string]any) string {
	t.Helper()
	claims := map[string]any{}
	for _, part := range []any{std, extra} {
		b, err := json.Marshal(part)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &claims); err != nil {
			t.Fatal(err)
		}
	}
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(header) + "." + enc(claims)
}
