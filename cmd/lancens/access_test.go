package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAccessControlFlags: --auth-config and --route-databases, and their
// environment variables.
func TestAccessControlFlags(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		env    map[string]string
		config string
		route  bool
		fails  bool
	}{
		{"Defaults", nil, nil, "", false, false},
		{"Flags", []string{"--auth-config", "/etc/lancens/auth.yaml", "--route-databases"}, nil, "/etc/lancens/auth.yaml", true, false},
		{"Environment", nil, map[string]string{"LANCENS_AUTH_CONFIG": "/a.yaml", "LANCENS_ROUTE_DATABASES": "true"}, "/a.yaml", true, false},
		{"FlagOverridesEnvironment", []string{"--route-databases=false"}, map[string]string{"LANCENS_ROUTE_DATABASES": "1"}, "", false, false},
		{"BadEnvironment", nil, map[string]string{"LANCENS_ROUTE_DATABASES": "sometimes"}, "", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseServeFlags(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if tc.fails {
				if err == nil {
					t.Fatal("accepted")
				}
				return
			}
			if err != nil || cfg.authConfig != tc.config || cfg.routeDatabases != tc.route {
				t.Fatalf("got %+v, %v", cfg, err)
			}
		})
	}
}

// TestServeWithAuthConfig starts the command with an access-control file:
// its keys get their roles, --api-key stays an admin key, and a file with
// an unknown field, or none, stops the start before the database or the
// warehouse is created.
func TestServeWithAuthConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "auth.yaml")
	if err := os.WriteFile(path, []byte("keys:\n  - {name: reader, key: r1, role: read}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, stop := startServe(t, "--auth-config", path, "--api-key", "adm")
	defer stop()
	for _, tc := range []struct {
		key, method, path string
		want              int
	}{
		{"r1", "GET", "/v1/namespace/$/list", 200},
		{"r1", "POST", "/v1/namespace/n/create", 403},
		{"adm", "POST", "/v1/namespace/n/create", 200},
		{"", "GET", "/v1/namespace/$/list", 401},
	} {
		req, _ := http.NewRequest(tc.method, "http://"+addr+tc.path, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		if tc.key != "" {
			req.Header.Set("x-api-key", tc.key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("%s %s with %q: %d, want %d", tc.method, tc.path, tc.key, res.StatusCode, tc.want)
		}
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("keys:\n  - {name: reader, key: r1, role: read, namespace: [a]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{bad, filepath.Join(dir, "missing.yaml")} {
		data := filepath.Join(dir, "fresh")
		err := run(t.Context(), []string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(data, "other.db"), "--warehouse", filepath.Join(data, "wh"),
			"--auth-config", file}, func(string) string { return "" }, io.Discard, io.Discard)
		if err == nil {
			t.Fatalf("started with access-control file %s", file)
		}
		// Refused before anything was created.
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Fatalf("%s was created before the access-control file %s was refused: %v", data, file, err)
		}
	}
}
