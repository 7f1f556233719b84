package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is the access-control file (--auth-config): API keys and how to
// accept JWT bearer tokens.
type Config struct {
	Keys []KeyConfig `yaml:"keys"`
	JWT  *JWTConfig  `yaml:"jwt"`
}

// KeyConfig is one API key.
type KeyConfig struct {
	// Name identifies the key in logs.
	Name string `yaml:"name"`
	// Key is the key itself, or "sha256:" and the hex SHA-256 of it, so
	// the file need not hold the secret.
	Key string `yaml:"key"`
	// Role is read, write or admin.
	Role string `yaml:"role"`
	// Namespaces, when given, scope the key to these identifiers ("$"-joined
	// names: top-level namespaces or deeper) and everything under them.
	Namespaces []string `yaml:"namespaces"`
	// Locations are the directories (or object-store prefixes) outside the
	// warehouse, inside an --external-root, where the key may declare or
	// register tables. Without it, a key other than an admin's places
	// tables only in the warehouse directories of its namespaces.
	Locations []string `yaml:"locations"`
}

// JWTConfig says which bearer tokens are accepted: signed (RS256 or ES256)
// by a key of the issuer's JWKS, for the audience, unexpired.
type JWTConfig struct {
	// JWKSURL is where the issuer publishes its signing keys.
	JWKSURL string `yaml:"jwks_url"`
	// Issuer must equal the token's iss claim.
	Issuer string `yaml:"issuer"`
	// Audience must be one of the token's aud values.
	Audience string `yaml:"audience"`
	// RoleClaim names the claim holding the role (a string, or a list of
	// which the strongest known role counts).
	RoleClaim string `yaml:"role_claim"`
	// NamespacesClaim, when set, names the claim holding the token's scopes
	// (a list of "$"-joined identifiers, or one). A token without that
	// claim is unscoped.
	NamespacesClaim string `yaml:"namespaces_claim"`
	// LocationsClaim, when set, names the claim holding the token's
	// locations (a list of directories or object-store prefixes, or one;
	// see KeyConfig.Locations).
	LocationsClaim string `yaml:"locations_claim"`

	// MinRefresh is the least time between two fetches of the JWKS caused
	// by tokens naming a key it does not hold. Default 10 s; tests set it
	// lower.
	MinRefresh time.Duration `yaml:"-"`
}

// LoadConfig reads an access-control file. It returns an error naming the
// problem for an unreadable file, unknown fields (a misspelt field must
// not silently widen access) or invalid entries.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth config: %w", err)
	}
	cfg, err := ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("auth config %s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig reads an access-control file's YAML and checks it (see
// Config.Check). It returns an error for unknown fields, invalid entries,
// and a file that defines no key and no jwt section.
func ParseConfig(b []byte) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var cfg Config
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if len(cfg.Keys) == 0 && cfg.JWT == nil {
		// Serving with it would leave the API open to anyone.
		return nil, errors.New("the file defines no keys and no jwt section")
	}
	return &cfg, nil
}

// Check returns an error naming the first invalid entry: a key without a
// name, key or valid role, two keys with one name or one secret, an
// empty or malformed scope, a sha256 key that is not 64 hex digits, or a
// jwt section without jwks_url, issuer, audience or role_claim.
func (c *Config) Check() error {
	names := map[string]bool{}
	digests := map[[sha256.Size]byte]string{}
	for i, k := range c.Keys {
		where := fmt.Sprintf("keys[%d]", i)
		if k.Name == "" {
			return fmt.Errorf("%s: name is required", where)
		}
		where += " (" + k.Name + ")"
		if names[k.Name] {
			return fmt.Errorf("%s: another key has this name", where)
		}
		names[k.Name] = true
		d, err := keyDigest(k.Key)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if other, ok := digests[d]; ok {
			return fmt.Errorf("%s: the same key as %s", where, other)
		}
		digests[d] = k.Name
		if _, err := ParseRole(k.Role); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if k.Namespaces != nil && len(k.Namespaces) == 0 {
			return fmt.Errorf("%s: namespaces is empty (leave it out for a key without a scope)", where)
		}
		for _, s := range k.Namespaces {
			if _, err := ParseScope(s); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
		}
		for _, l := range k.Locations {
			if err := checkLocation(l); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
		}
	}
	if j := c.JWT; j != nil {
		u, err := url.Parse(j.JWKSURL)
		if j.JWKSURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("jwt: jwks_url must be an http(s) URL, not %q", j.JWKSURL)
		}
		for field, v := range map[string]string{"issuer": j.Issuer, "audience": j.Audience, "role_claim": j.RoleClaim} {
			if v == "" {
				return fmt.Errorf("jwt: %s is required", field)
			}
		}
	}
	return nil
}

// checkLocation checks a granted location: an absolute path or a URI with
// a scheme. Returns an error naming it otherwise.
func checkLocation(l string) error {
	if strings.HasPrefix(l, "/") || (strings.Contains(l, "://") && !strings.HasPrefix(l, "://")) {
		return nil
	}
	return fmt.Errorf("location %q: want an absolute path or a URI such as s3://bucket/prefix", l)
}

const sha256Prefix = "sha256:"

// keyDigest returns the SHA-256 a key is compared by: of the key itself,
// or the one given as "sha256:<hex>". Returns an error for an empty key
// or a malformed digest.
func keyDigest(key string) ([sha256.Size]byte, error) {
	var d [sha256.Size]byte
	if key == "" {
		return d, errors.New("key is required")
	}
	if hexDigest, ok := strings.CutPrefix(key, sha256Prefix); ok {
		b, err := hex.DecodeString(hexDigest)
		if err != nil || len(b) != sha256.Size {
			return d, errors.New("a sha256: key needs 64 hex digits (sha256sum of the key)")
		}
		copy(d[:], b)
		return d, nil
	}
	return sha256.Sum256([]byte(key)), nil
}
