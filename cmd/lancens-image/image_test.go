package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/lancens/lancens/internal/ociimage"
)

// The repository's root, from this package's directory.
const root = "../.."

const (
	testVersion  = "v9.9.9-test"
	testRevision = "0123456789abcdef"
	testTag      = "lancens:image-test"
)

var built struct {
	once    sync.Once
	archive string
	err     error
}

// imageArchive builds lancens for linux and this machine's architecture,
// static, and its image archive, once per test binary, and returns the
// archive's path.
func imageArchive(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "lancens-image-test-")
		if err != nil {
			built.err = err
			return
		}
		bin := filepath.Join(dir, "lancens")
		cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-trimpath", "-ldflags",
			"-s -w -X github.com/lancens/lancens/internal/buildinfo.version="+testVersion+
				" -X github.com/lancens/lancens/internal/buildinfo.revision="+testRevision,
			"-o", bin, "github.com/lancens/lancens/cmd/lancens")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		built.archive = filepath.Join(dir, "image.tar")
		built.err = buildArchive(bin, built.archive)
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.archive
}

// buildArchive runs the command as make image does.
func buildArchive(bin, out string) error {
	var stderr strings.Builder
	err := run([]string{"-binary", bin, "-arch", runtime.GOARCH, "-version", testVersion, "-revision", testRevision,
		"-etc", filepath.Join(root, "deploy/image"), "-docs", filepath.Join(root, "LICENSE") + "," + filepath.Join(root, "NOTICE"),
		"-created", "1767225600", "-tag", testTag, "-out", out}, io.Discard, &stderr)
	if err != nil {
		return fmt.Errorf("lancens-image: %v\n%s", err, stderr.String())
	}
	return nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.archive != "" {
		os.RemoveAll(filepath.Dir(built.archive))
	}
	os.Exit(code)
}

// TestImageArchive reads the archive both ways docker load and podman load
// may (its docker-archive manifest.json and its OCI layout), checks that
// both give one valid image (every digest and diff id right), its runtime
// settings and labels, the files of its layer, that the binary in it runs,
// and that building again gives the same bytes.
func TestImageArchive(t *testing.T) {
	archive := imageArchive(t)

	// The docker-archive side.
	tag := mustTag(t)
	img, err := tarball.ImageFromPath(archive, &tag)
	if err != nil {
		t.Fatalf("read as a docker archive: %v", err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("the image is not valid: %v", err)
	}
	configDigest, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}

	// The OCI layout side: the same manifest, named.
	dir := t.TempDir()
	untar(t, archive, dir)
	index, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("read as an OCI layout: %v", err)
	}
	im, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].MediaType != types.OCIManifestSchema1 {
		t.Fatalf("index.json %+v, want one OCI manifest", im.Manifests)
	}
	digest := im.Manifests[0].Digest
	if a := im.Manifests[0].Annotations; a["io.containerd.image.name"] != "docker.io/library/"+testTag || a["org.opencontainers.image.ref.name"] != "image-test" {
		t.Errorf("index.json annotations %v", a)
	}
	ociImg, err := index.Image(digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(ociImg); err != nil {
		t.Fatalf("the OCI layout's image is not valid: %v", err)
	}
	// The docker archive rebuilds the manifest from the config and layers:
	// the two agree on those.
	if c, err := ociImg.ConfigName(); err != nil || c != configDigest {
		t.Fatalf("the OCI layout's config %s (%v), the docker archive's %s", c, err, configDigest)
	}

	// The configuration.
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}
	if c.User != "65532:65532" || strings.HasPrefix(c.User, "0") || c.User == "" {
		t.Errorf("user %q, want 65532:65532 (not root)", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"lancens", "serve"}) || len(c.Cmd) != 0 {
		t.Errorf("entrypoint %q cmd %q", c.Entrypoint, c.Cmd)
	}
	if !maps.Equal(c.ExposedPorts, map[string]struct{}{"2333/tcp": {}}) || !maps.Equal(c.Volumes, map[string]struct{}{"/data": {}}) || c.WorkingDir != "/data" {
		t.Errorf("ports %v volumes %v workdir %q", c.ExposedPorts, c.Volumes, c.WorkingDir)
	}
	for _, e := range []string{"LANCENS_ADDR=:2333", "LANCENS_DB=/data/lancens.db", "LANCENS_WAREHOUSE=/data/warehouse", "PATH=/usr/local/bin"} {
		if !slices.Contains(c.Env, e) {
			t.Errorf("env %q lacks %s", c.Env, e)
		}
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.version":  testVersion,
		"org.opencontainers.image.revision": testRevision,
		"org.opencontainers.image.source":   "https://github.com/lancens/lancens",
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.created":  "2026-01-01T00:00:00Z",
	} {
		if c.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], want)
		}
	}

	// The layer: one, with the files and owners the image needs.
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	files := layerFiles(t, layers[0])
	for name, want := range map[string]struct {
		mode     int64
		uid, gid int
	}{
		"data/":                             {0o755, 65532, 65532},
		"tmp/":                              {0o1777, 0, 0},
		"usr/local/bin/lancens":             {0o755, 0, 0},
		"etc/passwd":                        {0o644, 0, 0},
		"etc/group":                         {0o644, 0, 0},
		"etc/nsswitch.conf":                 {0o644, 0, 0},
		"etc/ssl/certs/ca-certificates.crt": {0o644, 0, 0},
		"usr/share/doc/lancens/LICENSE":     {0o644, 0, 0},
		"usr/share/doc/lancens/NOTICE":      {0o644, 0, 0},
	} {
		f, ok := files[name]
		if !ok {
			t.Errorf("the layer has no %s", name)
			continue
		}
		if f.Mode != want.mode || f.Uid != want.uid || f.Gid != want.gid {
			t.Errorf("%s: mode %o uid %d gid %d, want %o %d %d", name, f.Mode, f.Uid, f.Gid, want.mode, want.uid, want.gid)
		}
		if !f.ModTime.Equal(time.Unix(1767225600, 0)) {
			t.Errorf("%s: time %s, want the -created time", name, f.ModTime)
		}
	}
	if !regexp.MustCompile(`(?m)^lancens:x:65532:65532:`).Match(files["etc/passwd"].data) || !bytes.Contains(files["etc/group"].data, []byte("lancens:x:65532:")) {
		t.Errorf("passwd/group do not name user 65532:\n%s%s", files["etc/passwd"].data, files["etc/group"].data)
	}
	if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM(files["etc/ssl/certs/ca-certificates.crt"].data) {
		t.Error("the CA bundle holds no certificate")
	}

	// The binary runs (this machine is linux/GOARCH: the image's platform).
	if runtime.GOOS == "linux" {
		bin := filepath.Join(t.TempDir(), "lancens")
		if err := os.WriteFile(bin, files["usr/local/bin/lancens"].data, 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), testVersion) || !strings.Contains(string(out), testRevision) {
			t.Fatalf("lancens version from the image: %v\n%s", err, out)
		}
	}

	// Reproducible: the same inputs, the same archive.
	again := filepath.Join(t.TempDir(), "again.tar")
	if err := buildArchive(filepath.Join(filepath.Dir(archive), "lancens"), again); err != nil {
		t.Fatal(err)
	}
	if sum(t, archive) != sum(t, again) {
		t.Error("building the image again gave another archive")
	}
}

// TestDockerfileMatchesImage reads the final stage of the Dockerfile and
// checks that it builds what make image builds: the same user, working
// directory, volume, port, environment, entrypoint, labels and files.
func TestDockerfileMatchesImage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	stage := finalStage(string(b))
	one := func(instr string) string {
		t.Helper()
		if len(stage[instr]) != 1 {
			t.Fatalf("the final stage has %d %s instructions, want 1", len(stage[instr]), instr)
		}
		return stage[instr][0]
	}
	if got := one("USER"); got != ociimage.User {
		t.Errorf("USER %s, want %s", got, ociimage.User)
	}
	if got := one("WORKDIR"); got != ociimage.DataDir {
		t.Errorf("WORKDIR %s, want %s", got, ociimage.DataDir)
	}
	if got := one("VOLUME"); got != ociimage.DataDir {
		t.Errorf("VOLUME %s, want %s", got, ociimage.DataDir)
	}
	if got := one("EXPOSE"); got != ociimage.Port {
		t.Errorf("EXPOSE %s, want %s", got, ociimage.Port)
	}
	var entrypoint []string
	if err := json.Unmarshal([]byte(one("ENTRYPOINT")), &entrypoint); err != nil || !slices.Equal(entrypoint, ociimage.Entrypoint) {
		t.Errorf("ENTRYPOINT %s, want %q", one("ENTRYPOINT"), ociimage.Entrypoint)
	}
	if got := pairs(one("ENV")); !slices.Equal(got, slices.Sorted(slices.Values(ociimage.Env))) {
		t.Errorf("ENV %q, want %q", got, ociimage.Env)
	}
	var labelKeys []string
	for _, kv := range pairs(one("LABEL")) {
		k, _, _ := strings.Cut(kv, "=")
		labelKeys = append(labelKeys, k)
	}
	if want := slices.Sorted(maps.Keys(ociimage.Labels(ociimage.Spec{}))); !slices.Equal(labelKeys, want) {
		t.Errorf("LABEL keys %q, want %q", labelKeys, want)
	}
	copies := strings.Join(stage["COPY"], "\n")
	for _, f := range ociimage.EtcFiles {
		if !strings.Contains(copies, "deploy/image/"+f) {
			t.Errorf("the Dockerfile does not copy deploy/image/%s", f)
		}
	}
	for _, want := range []string{ociimage.BinaryPath, ociimage.CABundlePath, "--chown=65532:65532 /empty/ /data/", "--chmod=1777 /empty/ /tmp/", "LICENSE NOTICE /usr/share/doc/lancens/"} {
		if !strings.Contains(copies, want) {
			t.Errorf("no COPY of %s in the final stage:\n%s", want, copies)
		}
	}
}

// finalStage returns the instructions of the Dockerfile's last stage by
// name, their arguments with continuation lines joined.
func finalStage(dockerfile string) map[string][]string {
	joined := strings.ReplaceAll(dockerfile, "\\\n", " ")
	stage := map[string][]string{}
	for _, line := range strings.Split(joined, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, args, _ := strings.Cut(line, " ")
		instr = strings.ToUpper(instr)
		if instr == "FROM" {
			stage = map[string][]string{}
			continue
		}
		stage[instr] = append(stage[instr], strings.Join(strings.Fields(args), " "))
	}
	return stage
}

// pairs returns the KEY=VALUE pairs of an ENV or LABEL instruction,
// unquoted and sorted.
func pairs(args string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`([\w.]+)=("[^"]*"|\S+)`).FindAllStringSubmatch(args, -1) {
		out = append(out, m[1]+"="+strings.Trim(m[2], `"`))
	}
	slices.Sort(out)
	return out
}

// TestImageRunsInPodman loads the archive with podman load, into a storage
// directory of the test's own, and runs it: lancens version, then the
// image as it is (serve, port 2333 published on a free loopback port, an
// API key from a file mounted as a secret), which must answer the probes
// and refuse a request without the key.
func TestImageRunsInPodman(t *testing.T) {
	podmanBin, err := exec.LookPath("podman")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("podman is not installed (make podman installs it); CI must run the image")
		}
		t.Skip("podman is not installed (make podman installs it): the image is checked, not run")
	}
	archive := imageArchive(t)
	store := t.TempDir()
	// vfs: no overlay mounts needed; runc where present (crun refuses
	// the hybrid cgroup hierarchy some machines have); limits a process
	// without CAP_SYS_RESOURCE may set.
	base := []string{"--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"), "--storage-driver", "vfs"}
	if _, err := exec.LookPath("runc"); err == nil {
		base = append(base, "--runtime", "runc")
	}
	limits := []string{"--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"}
	podman := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, podmanBin, append(slices.Clone(base), args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	t.Cleanup(func() {
		podman("rm", "--all", "--force", "--volumes")
		podman("system", "reset", "--force")
	})
	if out, err := podman("load", "--input", archive); err != nil {
		t.Fatalf("podman load: %v\n%s", err, out)
	}
	image := "docker.io/library/" + testTag
	out, err := podman(append(append([]string{"run", "--rm", "--pull=never"}, limits...), "--entrypoint", "lancens", image, "version")...)
	if err != nil || !strings.Contains(out, testVersion) {
		t.Fatalf("podman run … lancens version: %v\n%s", err, out)
	}

	keys := filepath.Join(t.TempDir(), "api-keys")
	if err := os.WriteFile(keys, []byte("container-key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	out, err = podman(append(append([]string{"run", "--detach", "--pull=never", "--name", "lancens-image-test"}, limits...),
		"--publish", "127.0.0.1:"+port+":2333", "--volume", keys+":/run/secrets/api-keys:ro",
		"--env", "LANCENS_API_KEY_FILE=/run/secrets/api-keys", image)...)
	if err != nil {
		t.Fatalf("podman run: %v\n%s", err, out)
	}
	url := "http://127.0.0.1:" + port
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := http.Get(url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			logs, _ := podman("logs", "lancens-image-test")
			t.Fatalf("the container did not become ready: %v\n%s", err, logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for key, want := range map[string]int{"": 401, "container-key": 200} {
		req, _ := http.NewRequest("GET", url+"/v1/namespace/$/list", nil)
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
	if out, err := podman("top", "lancens-image-test", "user", "args"); err != nil || !strings.Contains(out, "lancens") || strings.Contains(out, "root") {
		t.Errorf("podman top: %v\n%s", err, out)
	}
	if out, err := podman("stop", "--time", "20", "lancens-image-test"); err != nil {
		t.Fatalf("podman stop: %v\n%s", err, out)
	}
	// SIGTERM: serve shuts down cleanly and exits 0.
	if out, err := podman("inspect", "--format", "{{.State.ExitCode}}", "lancens-image-test"); err != nil || out != "0" {
		logs, _ := podman("logs", "lancens-image-test")
		t.Errorf("exit code after podman stop: %q (%v)\n%s", out, err, logs)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// layerFile is a file of a layer: its header and content.
type layerFile struct {
	*tar.Header
	data []byte
}

// layerFiles reads every entry of a layer.
func layerFiles(t *testing.T, l v1.Layer) map[string]layerFile {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]layerFile{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = layerFile{h, data}
	}
}

// untar extracts the regular files and directories of the archive into dir.
func untar(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func mustTag(t *testing.T) name.Tag {
	t.Helper()
	tag, err := name.NewTag(testTag)
	if err != nil {
		t.Fatal(err)
	}
	return tag
}
