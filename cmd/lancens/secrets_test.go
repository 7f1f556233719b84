package main

import (
	"context"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lancens/lancens/internal/pgtest"
)

// TestSecretFiles reads API keys and storage options from files, named by
// flags or by the environment, and checks the mistakes a file can hold.
func TestSecretFiles(t *testing.T) {
	keys := writeFile(t, "keys", "# keys of the ops team\nk1\n\n  k2  \n")
	moreKeys := writeFile(t, "more-keys", "k3\n")
	opts := writeFile(t, "s3", "aws_access_key_id=AKIA\n# rotated monthly\naws_secret_access_key=s3cr=t\n")
	env := map[string]string{"LANCENS_API_KEY_FILE": moreKeys, "LANCENS_STORAGE_OPTION_FILE": opts}
	cfg, err := parseServeFlags([]string{"--api-key-file", keys, "--storage-option", "aws_region=eu-west-1"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"k3", "k1", "k2"}; !slices.Equal(cfg.apiKeys, want) {
		t.Errorf("API keys %q, want %q", cfg.apiKeys, want)
	}
	if want := map[string]string{"aws_access_key_id": "AKIA", "aws_secret_access_key": "s3cr=t", "aws_region": "eu-west-1"}; !maps.Equal(cfg.storageOptions, want) {
		t.Errorf("storage options %q, want %q", cfg.storageOptions, want)
	}

	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string // in the message
	}{
		{"MissingKeyFile", []string{"--api-key-file", filepath.Join(t.TempDir(), "none")}, nil, "no such file"},
		{"EmptyKeyFile", []string{"--api-key-file", writeFile(t, "empty", "# no keys yet\n\n")}, nil, "holds no entries"},
		{"BadOptionLine", []string{"--storage-option-file", writeFile(t, "bad", "aws_region=x\naws_secret_acces_key=y\n")}, nil, ":2: unknown storage option"},
		{"NoEquals", []string{"--storage-option-file", writeFile(t, "noeq", "aws_region\n")}, nil, "want KEY=VALUE"},
		{"BadEnvFile", nil, map[string]string{"LANCENS_API_KEY_FILE": filepath.Join(t.TempDir(), "none")}, "LANCENS_API_KEY_FILE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A flag's error is printed (with the usage); the environment's
			// is returned.
			var stderr strings.Builder
			_, err := parseServeFlags(tc.args, func(k string) string { return tc.env[k] }, &stderr)
			if err == nil || !strings.Contains(err.Error()+stderr.String(), tc.want) {
				t.Fatalf("error %v (printed %.300q), want one containing %q", err, stderr.String(), tc.want)
			}
		})
	}
}

// TestServeAPIKeyFile starts a server whose key comes from a file and
// checks that it asks for it.
func TestServeAPIKeyFile(t *testing.T) {
	addr, _ := startServe(t, "--api-key-file", writeFile(t, "keys", "from-a-file\n"))
	for key, want := range map[string]int{"": 401, "wrong": 401, "from-a-file": 200} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/v1/namespace/$/list", nil)
		if key != "" {
			req.Header.Set("x-api-key", key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("key %q: status %d, want %d", key, res.StatusCode, want)
		}
	}
}

// TestPostgresPasswordOutOfArgv starts serve on a PostgreSQL catalog whose
// role must give a password, with --db holding none: the password comes
// from PGPASSWORD or from the password file PGPASSFILE names, the
// conventions of libpq that pgx follows. Without either, serve fails.
func TestPostgresPasswordOutOfArgv(t *testing.T) {
	c := pgtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const role, password = "lancens_pw", "p@ss:w0rd"
	url, err := c.PasswordDatabase(ctx, role, password)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(url, password) {
		t.Fatalf("the URL %s holds the password", url)
	}
	// A password file's fields are host:port:database:user:password, with
	// the password's colon escaped.
	hostPort := strings.TrimPrefix(strings.Split(url, "/")[2], role+"@")
	passFile := writeFile(t, "pgpass", hostPort+":"+role+":"+role+":"+strings.ReplaceAll(password, ":", `\:`)+"\n")
	os.Chmod(passFile, 0o600)
	for _, tc := range []struct {
		name string
		env  map[string]string
		ok   bool
	}{
		{"NoPassword", map[string]string{"PGPASSFILE": filepath.Join(t.TempDir(), "none")}, false},
		{"PGPASSWORD", map[string]string{"PGPASSWORD": password}, true},
		{"PGPASSFILE", map[string]string{"PGPASSFILE": passFile}, true},
		{"WrongPGPASSWORD", map[string]string{"PGPASSWORD": "wrong"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"PGPASSWORD", "PGPASSFILE"} {
				t.Setenv(k, tc.env[k])
				if tc.env[k] == "" {
					os.Unsetenv(k)
				}
			}
			if !tc.ok {
				dir := t.TempDir()
				err := run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", url, "--warehouse", dir}, func(string) string { return "" }, io.Discard, io.Discard)
				if err == nil || !strings.Contains(err.Error(), "password") {
					t.Fatalf("serve without the password: %v; want a refusal about the password", err)
				}
				return
			}
			addr, stop := startServe(t, "--db", url)
			res, err := http.Get("http://" + addr + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("/readyz: %d", res.StatusCode)
			}
			if _, err := stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
