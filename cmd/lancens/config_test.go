package main

import (
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// writeFile writes content to name in a new temporary directory and
// returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigFilePrecedence sets flags from a configuration file, the
// environment and the command line: the command line wins over the
// environment, which wins over the file, which wins over the defaults; a
// repeatable flag takes its values from one place only.
func TestConfigFilePrecedence(t *testing.T) {
	file := writeFile(t, "lancens.yaml", `
# every kind of value: plain, list, mapping, size, duration, boolean
addr: 127.0.0.1:7001
log-level: debug
cors-origin: [https://a.example, https://b.example]
storage-option: {aws_region: eu-west-1, allow_http: "true"}
max-json-body: 2MiB
query-timeout: 5s
route-databases: true
`)
	type result struct {
		addr, logLevel string
		cors           []string
		storage        map[string]string
		maxJSONBody    int64
		queryTimeout   time.Duration
		routeDBs       bool
	}
	fromFile := result{addr: "127.0.0.1:7001", logLevel: "DEBUG", cors: []string{"https://a.example", "https://b.example"},
		storage: map[string]string{"aws_region": "eu-west-1", "allow_http": "true"}, maxJSONBody: 2 << 20, queryTimeout: 5 * time.Second, routeDBs: true}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want func(r *result)
	}{
		{name: "FileOnly", want: func(*result) {}},
		{name: "EnvOverridesFile", env: map[string]string{"LANCENS_ADDR": "127.0.0.1:7002", "LANCENS_CORS_ORIGINS": "https://env.example"},
			want: func(r *result) { r.addr, r.cors = "127.0.0.1:7002", []string{"https://env.example"} }},
		{name: "FlagOverridesEnvAndFile", args: []string{"--addr", "127.0.0.1:7003", "--log-level=warn", "--cors-origin", "https://flag.example", "--route-databases=false"},
			env: map[string]string{"LANCENS_ADDR": "127.0.0.1:7002"},
			want: func(r *result) {
				r.addr, r.logLevel, r.cors, r.routeDBs = "127.0.0.1:7003", "WARN", []string{"https://flag.example"}, false
			}},
		{name: "EnvFileNamesConfig", env: map[string]string{"LANCENS_CONFIG": file, "LANCENS_MAX_JSON_BODY": "4MiB"},
			want: func(r *result) { r.maxJSONBody = 4 << 20 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.env["LANCENS_CONFIG"] == "" {
				args = append([]string{"--config", file}, args...)
			}
			cfg, err := parseServeFlags(args, func(k string) string { return tc.env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			got := result{addr: cfg.addr, logLevel: cfg.logLevel.String(), cors: cfg.corsOrigins, storage: cfg.storageOptions,
				maxJSONBody: cfg.maxJSONBody, queryTimeout: cfg.queryTimeout, routeDBs: cfg.routeDatabases}
			want := fromFile
			tc.want(&want)
			if got.addr != want.addr || got.logLevel != want.logLevel || !slices.Equal(got.cors, want.cors) || !maps.Equal(got.storage, want.storage) ||
				got.maxJSONBody != want.maxJSONBody || got.queryTimeout != want.queryTimeout || got.routeDBs != want.routeDBs {
				t.Fatalf("got  %+v\nwant %+v", got, want)
			}
		})
	}
	// Without the file, the defaults.
	cfg, err := parseServeFlags(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.addr != defaultAddr || cfg.routeDatabases || len(cfg.corsOrigins) != 0 {
		t.Fatalf("defaults: addr %q, route-databases %v, cors %q", cfg.addr, cfg.routeDatabases, cfg.corsOrigins)
	}
}

// TestConfigFileErrors checks that a configuration file with a mistake
// stops serve with the file, line and problem named: a misspelt key is not
// ignored (it would leave a setting at its default unnoticed).
func TestConfigFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // in the message
	}{
		{"UnknownKeyClose", "addr: 127.0.0.1:1\nmax-jsn-body: 1MiB\n", []string{":2:", `unknown key "max-jsn-body"`, `did you mean "max-json-body"`}},
		{"UnknownKeyFar", "zzzzzz: 1\n", []string{":1:", `unknown key "zzzzzz"`}},
		{"UnderscoreKey", "log_level: debug\n", []string{`did you mean "log-level"`}},
		{"Twice", "addr: 127.0.0.1:1\naddr: 127.0.0.1:2\n", []string{":2:", "given twice"}},
		{"ListForOneValue", "addr: [127.0.0.1:1, 127.0.0.1:2]\n", []string{"takes one value"}},
		{"Null", "tls-cert:\n", []string{"no value"}},
		{"Nested", "storage-option: {aws_region: [a, b]}\n", []string{"KEY: VALUE"}},
		{"BadValue", "cache-mb: lots\n", []string{"cache-mb"}},
		{"BadStorageOption", "storage-option: {aws_endpont: http://x}\n", []string{`did you mean "aws_endpoint"`}},
		{"ConfigInConfig", "config: other.yaml\n", []string{"command-line flag only"}},
		{"NotAMapping", "- addr\n", []string{"want a mapping"}},
		{"BadYAML", "addr: [\n", []string{"yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "lancens.yaml", tc.yaml)
			_, err := parseServeFlags([]string{"--config", path}, func(string) string { return "" }, io.Discard)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range append(tc.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, err := parseServeFlags([]string{"--config", filepath.Join(t.TempDir(), "missing.yaml")}, func(string) string { return "" }, io.Discard); err == nil {
		t.Fatal("accepted a missing configuration file")
	}
	// An empty file (or one of comments) sets nothing.
	if _, err := parseServeFlags([]string{"--config", writeFile(t, "c.yaml", "# nothing yet\n")}, func(string) string { return "" }, io.Discard); err != nil {
		t.Fatalf("empty file: %v", err)
	}
}

// TestPrintConfig runs `lancens serve --print-config` with settings from
// every source and checks that it prints them with their sources, hides
// every secret, starts nothing, and that what it prints is itself a
// configuration file that gives the same configuration.
func TestPrintConfig(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "never", "lancens.db")
	keyFile := writeFile(t, "keys", "key-from-file\n")
	file := writeFile(t, "lancens.yaml", "log-level: debug\nstorage-option: {aws_secret_access_key: secret-from-config, aws_region: eu-west-1}\n")
	env := map[string]string{"LANCENS_API_KEYS": "key-from-env-1,key-from-env-2", "LANCENS_MAX_PAGE_SIZE": "500"}
	var out strings.Builder
	err := run(t.Context(), []string{"serve", "--print-config", "--config", file, "--db", "postgres://u:pg-password@db.example/lancens",
		"--api-key", "key-from-flag", "--api-key-file", keyFile, "--warehouse", filepath.Join(dir, "wh")},
		func(k string) string { return env[k] }, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	printed := out.String()
	for _, secret := range []string{"key-from-file", "key-from-env-1", "key-from-env-2", "key-from-flag", "secret-from-config", "pg-password"} {
		if strings.Contains(printed, secret) {
			t.Errorf("--print-config shows the secret %q:\n%s", secret, printed)
		}
	}
	var got map[string]yaml.Node
	if err := yaml.Unmarshal([]byte(printed), &got); err != nil {
		t.Fatalf("--print-config is not YAML: %v\n%s", err, printed)
	}
	for key, want := range map[string]string{
		"addr":           "127.0.0.1:2333 # default",
		"log-level":      "debug # --config",
		"max-page-size":  "500 # env LANCENS_MAX_PAGE_SIZE",
		"api-key":        "[<redacted>, <redacted>, <redacted>] # env LANCENS_API_KEYS and command line",
		"api-key-file":   "[" + keyFile + "] # command line",
		"storage-option": "[aws_secret_access_key=<redacted>, aws_region=eu-west-1] # --config",
		"db":             "postgres://u:xxxxx@db.example/lancens # command line",
	} {
		if !strings.Contains(printed, key+": "+want+"\n") {
			t.Errorf("--print-config has no line %q:\n%s", key+": "+want, printed)
		}
	}
	if _, err := os.Stat(filepath.Dir(db)); err == nil {
		t.Error("--print-config created the database's directory")
	}

	// Without secrets, the printed configuration round-trips.
	first := printConfigOf(t, "--config", writeFile(t, "a.yaml", "addr: 127.0.0.1:7010\ncors-origin: [https://a.example]\nretain-versions-for: 1h\n"))
	second := printConfigOf(t, "--config", writeFile(t, "b.yaml", first))
	if values(t, first) == nil || !maps.EqualFunc(values(t, first), values(t, second), func(a, b string) bool { return a == b }) {
		t.Fatalf("printed again from its own output, the configuration differs:\n%s\n---\n%s", first, second)
	}
}

// printConfigOf returns what `lancens serve --print-config args…` prints.
func printConfigOf(t *testing.T, args ...string) string {
	t.Helper()
	var out strings.Builder
	if err := run(t.Context(), append([]string{"serve", "--print-config"}, args...), func(string) string { return "" }, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// values returns the settings of a printed configuration, without the
// comments that say where they came from.
func values(t *testing.T, printed string) map[string]string {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(printed), &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range m {
		b, _ := yaml.Marshal(v)
		out[k] = string(b)
	}
	return out
}

// TestEveryServeFlagNamesItsEnvironmentVariable holds the convention the
// configuration file relies on to let the environment override it: each
// flag's usage names its variable as "(env NAME".
func TestEveryServeFlagNamesItsEnvironmentVariable(t *testing.T) {
	cfg, err := parseServeFlags(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.config.fs.VisitAll(func(f *flag.Flag) {
		if f.Name != printConfigFlag && envName(f) == "" {
			t.Errorf("--%s: its usage names no environment variable (env NAME)", f.Name)
		}
	})
}
