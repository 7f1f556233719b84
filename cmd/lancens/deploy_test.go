package main

import (
	"bufio"
	"context"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/pgtest"
	"github.com/lancens/lancens/internal/s3test"
)

// deployDir is the repository's deploy/, from this package's directory.
const deployDir = "../../deploy"

// composeFile is what the tests read of deploy/compose/compose.yaml.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       string            `yaml:"build"`
		Entrypoint  []string          `yaml:"entrypoint"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		EnvFile     []string          `yaml:"env_file"`
		Secrets     []string          `yaml:"secrets"`
		Ports       []string          `yaml:"ports"`
		Deploy      struct {
			Replicas int `yaml:"replicas"`
		} `yaml:"deploy"`
	} `yaml:"services"`
	Secrets map[string]struct {
		File string `yaml:"file"`
	} `yaml:"secrets"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, "compose", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(false)
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return c
}

// secretName matches the environment variables that would hold a secret
// themselves; their _FILE forms (and PGPASSFILE) name files instead.
var secretName = regexp.MustCompile(`(PASSWORD|SECRET|TOKEN|API_KEYS?|ACCESS_KEY(_ID)?|STORAGE_OPTIONS)$`)

// TestComposeFile reads deploy/compose/compose.yaml: two lancens replicas
// of the image on a PostgreSQL catalog and an S3 store, published on
// loopback, and not one secret in the file or on a command line: each
// comes from a file under secrets/ (a compose secret or an env file) that
// the service mounts.
func TestComposeFile(t *testing.T) {
	c := readCompose(t)
	for _, name := range []string{"lancens", "postgres", "s3"} {
		if _, ok := c.Services[name]; !ok {
			t.Fatalf("no service %s", name)
		}
	}
	l := c.Services["lancens"]
	if !strings.Contains(l.Image, "lancens:") || l.Build == "" {
		t.Errorf("lancens: image %q build %q, want the lancens image and the Dockerfile", l.Image, l.Build)
	}
	if l.Deploy.Replicas != 2 {
		t.Errorf("lancens: %d replicas, want 2", l.Deploy.Replicas)
	}
	if len(l.Entrypoint)+len(l.Command) != 0 {
		t.Errorf("lancens: entrypoint %q command %q; the image's entrypoint and the environment say everything", l.Entrypoint, l.Command)
	}
	for _, p := range l.Ports {
		if !strings.HasPrefix(p, "127.0.0.1:") {
			t.Errorf("lancens publishes %q beyond loopback", p)
		}
	}
	if u, err := url.Parse(l.Environment["LANCENS_DB"]); err != nil || u.Scheme != "postgres" || u.Host != "postgres:5432" {
		t.Errorf("LANCENS_DB %q: want the postgres service", l.Environment["LANCENS_DB"])
	} else if _, has := u.User.Password(); has {
		t.Errorf("LANCENS_DB %q holds a password", l.Environment["LANCENS_DB"])
	}
	if !strings.HasPrefix(l.Environment["LANCENS_WAREHOUSE"], "s3://") {
		t.Errorf("LANCENS_WAREHOUSE %q: want the S3 store", l.Environment["LANCENS_WAREHOUSE"])
	}
	for name, svc := range c.Services {
		for k, v := range svc.Environment {
			if secretName.MatchString(k) {
				t.Errorf("%s: environment %s is a secret written in the file; use %s_FILE or a secret", name, k, k)
			}
			// A file named by the environment is a secret the service mounts.
			if strings.HasSuffix(k, "_FILE") || k == "PGPASSFILE" {
				secret, ok := strings.CutPrefix(v, "/run/secrets/")
				if !ok || !slices.Contains(svc.Secrets, secret) {
					t.Errorf("%s: %s=%s is not a secret the service mounts", name, k, v)
				}
			}
		}
		for _, a := range append(slices.Clone(svc.Entrypoint), svc.Command...) {
			if strings.Contains(a, "--api-key ") || strings.Contains(a, "--storage-option ") || strings.Contains(a, "--secret") || strings.Contains(a, "--access") {
				t.Errorf("%s: a secret on the command line: %q", name, a)
			}
		}
		for _, s := range svc.Secrets {
			if f := c.Secrets[s].File; !strings.HasPrefix(f, "secrets/") {
				t.Errorf("%s: secret %s is %q, want a file under secrets/", name, s, f)
			}
		}
		for _, f := range svc.EnvFile {
			if !strings.HasPrefix(f, "secrets/") {
				t.Errorf("%s: env file %q is not under secrets/", name, f)
			}
		}
	}
	if img := c.Services["s3"].Image; !strings.HasPrefix(img, "versity/versitygw:"+s3test.Version) {
		t.Errorf("s3 image %q, want the Versity gateway the tests run (%s)", img, s3test.Version)
	}
}

// TestComposeSettingsServe makes the secrets with deploy/compose/secrets.sh,
// then runs what compose would — a PostgreSQL role that needs the
// generated password, the Versity gateway with the generated account from
// its env file, and two lancens replicas with the compose file's
// environment and secret files — on this machine, with host names and
// /run/secrets paths mapped to the test's. Both replicas serve one
// catalog, ask for the generated key and place tables on the S3 store.
func TestComposeSettingsServe(t *testing.T) {
	c := readCompose(t)
	// secrets.sh, in a copy of deploy/compose.
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join(deployDir, "compose", "secrets.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secrets.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a second run keeps what the first made
		if out, err := exec.Command("sh", filepath.Join(dir, "secrets.sh")).CombinedOutput(); err != nil {
			t.Fatalf("secrets.sh: %v\n%s", err, out)
		}
	}
	secrets := filepath.Join(dir, "secrets")
	if fi, err := os.Stat(secrets); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("secrets/: %v %v, want a directory of mode 0700", fi.Mode(), err)
	}
	for name, s := range c.Secrets {
		if _, err := os.Stat(filepath.Join(dir, s.File)); err != nil {
			t.Fatalf("secret %s: secrets.sh did not make %s", name, s.File)
		}
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(secrets, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	s3env := map[string]string{}
	for _, line := range strings.Split(read("s3.env"), "\n") {
		k, v, _ := strings.Cut(line, "=")
		s3env[k] = v
	}
	apiKey := strings.Split(read("api_keys"), "\n")[0]
	if got := read("api_key.header"); got != "x-api-key: "+apiKey {
		t.Errorf("api_key.header is %q, want the first key's header", got)
	}

	// PostgreSQL: the role and password pgpass names.
	pg := pgtest.Shared(t)
	db, _ := url.Parse(c.Services["lancens"].Environment["LANCENS_DB"])
	fields := strings.Split(read("pgpass"), ":")
	if len(fields) != 5 || fields[0]+":"+fields[1] != db.Host || fields[2] != strings.TrimPrefix(db.Path, "/") || fields[3] != db.User.Username() || fields[4] != read("pg_password") {
		t.Fatalf("pgpass %q does not match LANCENS_DB %s and pg_password", fields, db.Redacted())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const role = "compose_lancens"
	pgURL, err := pg.PasswordDatabase(ctx, role, fields[4])
	if err != nil {
		t.Fatal(err)
	}
	local, _ := url.Parse(pgURL)
	pgpass := filepath.Join(secrets, "pgpass.local")
	if err := os.WriteFile(pgpass, []byte(local.Host+":"+role+":"+role+":"+fields[4]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSFILE", pgpass)

	// The S3 store, with the account of its env file and the bucket made.
	bin, err := s3test.Binary()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("S3 gateway unavailable under CI: %v", err)
		}
		t.Skipf("S3 gateway unavailable: %v", err)
	}
	s3dir := t.TempDir()
	warehouse, _ := url.Parse(c.Services["lancens"].Environment["LANCENS_WAREHOUSE"])
	if err := os.Mkdir(filepath.Join(s3dir, warehouse.Host), 0o755); err != nil {
		t.Fatal(err)
	}
	gw, err := s3test.LaunchAs(bin, s3dir, s3env["ROOT_ACCESS_KEY_ID"], s3env["ROOT_SECRET_ACCESS_KEY"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Stop)
	opts := strings.ReplaceAll(read("s3_options"), "http://s3:7070", gw.Endpoint)
	if err := os.WriteFile(filepath.Join(secrets, "s3_options.local"), []byte(opts+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The replicas: the compose environment, mapped.
	env := map[string]string{"LANCENS_ADDR": "127.0.0.1:0"}
	for k, v := range c.Services["lancens"].Environment {
		switch {
		case k == "LANCENS_DB":
			v = "postgres://" + role + "@" + local.Host + "/" + role + "?sslmode=disable"
		case k == "PGPASSFILE":
			continue // set in the process: pgx reads it there
		case k == "LANCENS_STORAGE_OPTION_FILE":
			v = filepath.Join(secrets, "s3_options.local")
		case strings.HasPrefix(v, "/run/secrets/"):
			v = filepath.Join(secrets, strings.TrimPrefix(v, "/run/secrets/"))
		}
		env[k] = v
	}
	var addrs []string
	for range c.Services["lancens"].Deploy.Replicas {
		addrs = append(addrs, serveWithEnv(t, env))
	}
	if len(addrs) != 2 {
		t.Fatalf("%d replicas", len(addrs))
	}
	first, err := client.New("http://"+addrs[0], client.WithAPIKey(apiKey))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.CreateNamespace(ctx, []string{"shop"}, nil); err != nil {
		t.Fatal(err)
	}
	second, err := client.New("http://"+addrs[1], client.WithAPIKey(apiKey))
	if err != nil {
		t.Fatal(err)
	}
	info, err := second.DeclareTable(ctx, []string{"shop", "orders"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.Location, "s3://"+warehouse.Host+warehouse.Path+"/") {
		t.Errorf("declared at %q, want under %s", info.Location, warehouse)
	}
	keyless, err := client.New("http://" + addrs[1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keyless.DescribeNamespace(ctx, []string{"shop"}); err == nil {
		t.Error("a replica answered without the key")
	}
}

// serveWithEnv runs `lancens serve` with no arguments and the environment
// env until the test ends, and returns its address.
func serveWithEnv(t *testing.T, env map[string]string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, w := io.Pipe()
	done := make(chan error, 1)
	var stderr strings.Builder
	go func() {
		done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, w, &stderr)
		w.Close()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("serve did not start: %v\n%s", <-done, stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	t.Cleanup(func() {
		cancel()
		<-done
	})
	m := regexp.MustCompile(`http://(\S+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("startup line %q", line)
	}
	return m[1]
}

// TestSystemdUnit checks deploy/systemd/lancens.service with systemd's own
// tools: systemd-analyze verify finds nothing to say (with ExecStart
// pointing at an executable that exists here), systemd-analyze security
// rates its exposure at most 2.0 ("OK"), and the hardening the README
// promises is there. The example configuration file it reads is a valid
// --config.
func TestSystemdUnit(t *testing.T) {
	unit, err := os.ReadFile(filepath.Join(deployDir, "systemd", "lancens.service"))
	if err != nil {
		t.Fatal(err)
	}
	directives := map[string][]string{}
	for _, line := range strings.Split(string(unit), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && !strings.HasPrefix(line, "#") {
			directives[k] = append(directives[k], v)
		}
	}
	for k, want := range map[string]string{
		"DynamicUser": "yes", "ProtectSystem": "strict", "StateDirectory": "lancens", "NoNewPrivileges": "yes",
		"CapabilityBoundingSet": "", "AmbientCapabilities": "", "PrivateTmp": "yes", "ProtectHome": "yes",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX", "MemoryDenyWriteExecute": "yes",
	} {
		if !slices.Contains(directives[k], want) {
			t.Errorf("%s=%s is missing (has %q)", k, want, directives[k])
		}
	}
	for _, exec := range directives["ExecStart"] {
		if strings.Contains(exec, "--api-key ") || strings.Contains(exec, "--storage-option ") || strings.Contains(exec, "postgres://") {
			t.Errorf("ExecStart puts a secret on the command line: %s", exec)
		}
	}

	// The example configuration reads, with the unit's environment.
	var out strings.Builder
	env := map[string]string{"LANCENS_DB": "/var/lib/lancens/lancens.db", "LANCENS_WAREHOUSE": "/var/lib/lancens/warehouse"}
	if err := run(t.Context(), []string{"serve", "--config", filepath.Join(deployDir, "systemd", "lancens.yaml"), "--print-config"},
		func(k string) string { return env[k] }, &out, io.Discard); err != nil {
		t.Fatalf("lancens.yaml: %v", err)
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze is not installed (make systemd-analyze installs it); CI must check the unit")
		}
		t.Skip("systemd-analyze is not installed (make systemd-analyze installs it): the unit's directives are checked, not the unit")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lancens.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/lancens", self)), 0o644); err != nil {
		t.Fatal(err)
	}
	verify, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(verify))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, verify)
	}
	security, err := exec.Command(analyze, "security", "--offline=yes", "--threshold=20", path).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze security rates the unit above 2.0: %v\n%s", err, security)
	}
	if m := regexp.MustCompile(`Overall exposure level for \S+: (\S+)`).FindSubmatch(security); m != nil {
		t.Logf("systemd-analyze security: exposure %s", m[1])
	}
}
