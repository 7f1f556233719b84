package auth_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/store"
)

func sha(s string) string {
	d := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(d[:])
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		ok   bool
	}{
		{"Empty", ``, false},
		{"NoKeys", `keys: []`, false},
		{"Complete", `
keys:
  - {name: reader, key: r1, role: read, namespaces: [alpha]}
  - {name: ops, key: "` + sha("o1") + `", role: admin}
jwt:
  jwks_url: https://issuer.example/.well-known/jwks.json
  issuer: https://issuer.example
  audience: lancens
  role_claim: lancens_role
  namespaces_claim: lancens_namespaces
`, true},
		{"DeepScope", `keys: [{name: a, key: k, role: write, namespaces: ["alpha$team"]}]`, true},
		{"UnknownField", `keys: [{name: a, key: k, role: read, namespace: [alpha]}]`, false},
		{"UnknownTopField", `key: [{name: a, key: k, role: read}]`, false},
		{"MissingName", `keys: [{key: k, role: read}]`, false},
		{"MissingKey", `keys: [{name: a, role: read}]`, false},
		{"MissingRole", `keys: [{name: a, key: k}]`, false},
		{"UnknownRole", `keys: [{name: a, key: k, role: owner}]`, false},
		{"SameName", `keys: [{name: a, key: k1, role: read}, {name: a, key: k2, role: read}]`, false},
		{"SameKey", `keys: [{name: a, key: k1, role: read}, {name: b, key: k1, role: admin}]`, false},
		{"SameKeyHashed", `keys: [{name: a, key: k1, role: read}, {name: b, key: "` + sha("k1") + `", role: admin}]`, false},
		{"EmptyNamespaces", `keys: [{name: a, key: k, role: read, namespaces: []}]`, false},
		{"Locations", `keys: [{name: a, key: k, role: write, namespaces: [alpha], locations: [/data/ext, "s3://bucket/alpha"]}]`, true},
		{"RelativeLocation", `keys: [{name: a, key: k, role: write, locations: [data/ext]}]`, false},
		{"EmptyScope", `keys: [{name: a, key: k, role: read, namespaces: [""]}]`, false},
		{"EmptyScopePart", `keys: [{name: a, key: k, role: read, namespaces: ["alpha$"]}]`, false},
		{"ShortDigest", `keys: [{name: a, key: "sha256:abcd", role: read}]`, false},
		{"NotHexDigest", `keys: [{name: a, key: "sha256:` + strings.Repeat("z", 64) + `", role: read}]`, false},
		{"JWTWithoutURL", `jwt: {issuer: i, audience: a, role_claim: r}`, false},
		{"JWTBadURL", `jwt: {jwks_url: "file:///etc/keys", issuer: i, audience: a, role_claim: r}`, false},
		{"JWTWithoutIssuer", `jwt: {jwks_url: "https://i/jwks", audience: a, role_claim: r}`, false},
		{"JWTWithoutAudience", `jwt: {jwks_url: "https://i/jwks", issuer: i, role_claim: r}`, false},
		{"JWTWithoutRoleClaim", `jwt: {jwks_url: "https://i/jwks", issuer: i, audience: a}`, false},
		{"NotYAML", `keys: [`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := auth.ParseConfig([]byte(tc.yaml))
			if (err == nil) != tc.ok {
				t.Fatalf("ok=%v, got error %v", tc.ok, err)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth.yaml")
	if err := os.WriteFile(path, []byte("keys: [{name: a, key: k, role: read}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := auth.LoadConfig(path)
	if err != nil || len(cfg.Keys) != 1 || cfg.Keys[0].Name != "a" {
		t.Fatalf("got %+v, %v", cfg, err)
	}
	if _, err := auth.LoadConfig(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("a missing file loaded")
	}
}

// TestAPIKeys checks that keys, plain or given by digest, and the admin
// keys of --api-key find their principals, and that wrong or missing
// credentials are Unauthenticated.
func TestAPIKeys(t *testing.T) {
	cfg, err := auth.ParseConfig([]byte(`
keys:
  - {name: reader, key: r1, role: read, namespaces: [alpha, "beta$team"]}
  - {name: writer, key: "` + sha("w1") + `", role: write}
`))
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(cfg, []string{"adm"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		creds  auth.Credentials
		want   string
		role   auth.Role
		scoped bool
		code   store.Code
	}{
		{"PlainKey", auth.Credentials{APIKey: "r1"}, "reader", auth.RoleRead, true, -1},
		{"HashedKey", auth.Credentials{APIKey: "w1"}, "writer", auth.RoleWrite, false, -1},
		{"BearerKey", auth.Credentials{Bearer: "w1"}, "writer", auth.RoleWrite, false, -1},
		{"AdminFlagKey", auth.Credentials{APIKey: "adm"}, "api-key-1", auth.RoleAdmin, false, -1},
		{"DigestIsNotTheKey", auth.Credentials{APIKey: sha("w1")}, "", 0, false, store.CodeUnauthenticated},
		{"WrongKey", auth.Credentials{APIKey: "r2"}, "", 0, false, store.CodeUnauthenticated},
		{"PrefixOfKey", auth.Credentials{APIKey: "r"}, "", 0, false, store.CodeUnauthenticated},
		{"Missing", auth.Credentials{}, "", 0, false, store.CodeUnauthenticated},
		{"APIKeyWinsOverBearer", auth.Credentials{APIKey: "bad", Bearer: "w1"}, "", 0, false, store.CodeUnauthenticated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := a.Authenticate(t.Context(), tc.creds)
			if tc.code >= 0 {
				if store.ErrorCode(err) != tc.code {
					t.Fatalf("want code %d, got %v", tc.code, err)
				}
				return
			}
			if err != nil || p.Name != tc.want || p.Role != tc.role || p.Scoped != tc.scoped {
				t.Fatalf("got %+v, %v", p, err)
			}
		})
	}
	if _, err := auth.New(cfg, []string{"r1"}, nil); err == nil {
		t.Fatal("an --api-key equal to a file key was accepted")
	}
	open, err := auth.New(nil, nil, nil)
	if err != nil || open.Enabled() {
		t.Fatalf("no keys: enabled=%v err=%v", open.Enabled(), err)
	}
	if p, err := open.Authenticate(t.Context(), auth.Credentials{}); err != nil || p.Name != auth.Anonymous.Name || p.Role != auth.RoleAdmin {
		t.Fatalf("open access: got %+v, %v", p, err)
	}
}

func TestScopes(t *testing.T) {
	p := auth.Principal{Role: auth.RoleWrite, Scoped: true, Scopes: [][]string{{"alpha"}, {"beta", "team"}}}
	for _, tc := range []struct {
		id            []string
		covers, leads bool
	}{
		{[]string{}, false, true},
		{[]string{"alpha"}, true, false},
		{[]string{"alpha", "t"}, true, false},
		{[]string{"alphabet"}, false, false},
		{[]string{"beta"}, false, true},
		{[]string{"beta", "team"}, true, false},
		{[]string{"beta", "team", "t"}, true, false},
		{[]string{"beta", "other"}, false, false},
		{[]string{"gamma"}, false, false},
	} {
		if p.Covers(tc.id) != tc.covers || p.Leads(tc.id) != tc.leads || p.Sees(tc.id) != (tc.covers || tc.leads) {
			t.Errorf("%q: covers=%v leads=%v, want %v %v", tc.id, p.Covers(tc.id), p.Leads(tc.id), tc.covers, tc.leads)
		}
	}
	unscoped := auth.Principal{Role: auth.RoleRead}
	if !unscoped.Covers([]string{"anything"}) || unscoped.Leads([]string{}) {
		t.Error("an unscoped principal covers everything and needs no leads")
	}
	for _, tc := range []struct {
		p      auth.Principal
		prefix []string
		want   [][]string
	}{
		{unscoped, []string{"alpha"}, [][]string{{"alpha"}}},
		{p, []string{"alpha"}, [][]string{{"alpha"}}},
		{p, []string{"beta"}, [][]string{{"beta", "team"}}},
		{p, []string{"gamma"}, nil},
	} {
		got := tc.p.Within(tc.prefix)
		if !got.Scoped || !slices.EqualFunc(got.Scopes, tc.want, slices.Equal) || got.Role != tc.p.Role {
			t.Errorf("%+v within %q: got %+v, want scopes %q", tc.p, tc.prefix, got, tc.want)
		}
	}
	if (auth.Principal{Role: auth.RoleNone}).May(auth.RoleNone) {
		t.Error("RoleNone grants something")
	}
	if !(auth.Principal{Role: auth.RoleWrite}).May(auth.RoleRead) || (auth.Principal{Role: auth.RoleWrite}).May(auth.RoleAdmin) {
		t.Error("write must include read and not admin")
	}
}

// TestREADMEExample parses the complete example file of the README's
// access-control section.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Access control")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("no yaml block in the README's access-control section")
	}
	cfg, err := auth.ParseConfig([]byte(block))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Keys) != 3 || cfg.JWT == nil || cfg.JWT.NamespacesClaim == "" {
		t.Fatalf("the example lost parts: %+v", cfg)
	}
	if _, err := auth.New(cfg, nil, nil); err != nil {
		t.Fatal(err)
	}
}
