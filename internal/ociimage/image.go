// Package ociimage builds the container image of lancens without a
// container daemon, and writes it as an archive that docker load and
// podman load accept.
//
// The image is one layer on nothing (scratch): the static lancens binary,
// a passwd and group file naming its non-root user, the CA certificates of
// the build machine (lancens reaches object stores over TLS), Go's name
// service order, and the licence. Nothing is pulled from a registry. The
// image runs `lancens serve` as user 65532 with its database and
// warehouse under the volume /data, listening on every interface of the
// container (port 2333): container networking decides who reaches it.
//
// The same inputs give the same image, byte for byte: every file of the
// layer has the creation time given (the commit's time in `make image`),
// and nothing else varies. The Dockerfile at the repository's root builds
// the same image for people with a daemon; a test holds the two together.
package ociimage

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What the image is: the runtime settings, which the Dockerfile repeats.
const (
	// UID and GID are the non-root user and group lancens runs as (the
	// "nonroot" of distroless images).
	UID, GID = 65532, 65532
	// User is the image's user, numeric: no passwd lookup is needed to
	// drop root.
	User = "65532:65532"
	// DataDir is the volume that holds the database and the warehouse, and
	// the working directory.
	DataDir = "/data"
	// Port is where lancens listens in the container.
	Port = "2333/tcp"
	// BinaryPath is where the binary lies; PATH finds it there.
	BinaryPath = "/usr/local/bin/lancens"
	// CABundlePath is where Go looks for CA certificates first on Linux.
	CABundlePath = "/etc/ssl/certs/ca-certificates.crt"
)

// Entrypoint is the command the image runs; arguments given to docker run
// are added to it.
var Entrypoint = []string{"lancens", "serve"}

// Env is the image's environment: serve listens on every interface of the
// container and keeps its files in the volume. Being environment rather
// than arguments, they stay in force when docker run adds flags, and a
// flag (or -e) overrides them.
var Env = []string{
	"PATH=/usr/local/bin",
	"LANCENS_ADDR=:2333",
	"LANCENS_DB=/data/lancens.db",
	"LANCENS_WAREHOUSE=/data/warehouse",
}

// Spec says what goes into an image.
type Spec struct {
	// Binary is the lancens binary, built for linux and Arch, static.
	Binary string
	// Arch is its GOARCH (amd64, arm64).
	Arch string
	// EtcDir holds the passwd, group and nsswitch.conf files of the image
	// (deploy/image).
	EtcDir string
	// CABundle is a PEM file of CA certificates (Debian's
	// /etc/ssl/certs/ca-certificates.crt).
	CABundle string
	// Docs are files put in /usr/share/doc/lancens (LICENSE, NOTICE).
	Docs []string
	// Version, Revision, Source and Licenses fill the OCI labels
	// org.opencontainers.image.*.
	Version, Revision, Source, Licenses string
	// Created is the image's creation time and every file's; the commit's
	// time keeps builds reproducible.
	Created time.Time
}

// EtcFiles are the files Spec.EtcDir provides.
var EtcFiles = []string{"passwd", "group", "nsswitch.conf"}

// Labels returns the image's OCI annotations for spec.
func Labels(spec Spec) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "lancens",
		"org.opencontainers.image.description": "Lance Namespace REST server: catalog, commit coordinator and LanceDB remote database",
		"org.opencontainers.image.version":     spec.Version,
		"org.opencontainers.image.revision":    spec.Revision,
		"org.opencontainers.image.source":      spec.Source,
		"org.opencontainers.image.licenses":    spec.Licenses,
		"org.opencontainers.image.created":     spec.Created.UTC().Format(time.RFC3339),
	}
}

// Build returns the image spec describes, with OCI media types. It returns
// an error when a file cannot be read, the binary is not a static Linux
// executable, or a label is empty.
func Build(spec Spec) (v1.Image, error) {
	for name, v := range map[string]string{"version": spec.Version, "revision": spec.Revision, "source": spec.Source, "licenses": spec.Licenses, "arch": spec.Arch} {
		if v == "" {
			return nil, fmt.Errorf("ociimage: the %s is required", name)
		}
	}
	if err := checkStatic(spec.Binary); err != nil {
		return nil, err
	}
	layerTar, err := rootfs(spec)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: spec.Created}, CreatedBy: "lancens-image (make image)",
		Comment: "lancens " + spec.Version + ", CA certificates, passwd/group, licence",
	}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", spec.Arch
	if spec.Arch == "arm64" {
		cf.Variant = "v8"
	}
	cf.Created = v1.Time{Time: spec.Created}
	cf.Config = v1.Config{
		User:         User,
		Env:          Env,
		Entrypoint:   Entrypoint,
		WorkingDir:   DataDir,
		Volumes:      map[string]struct{}{DataDir: {}},
		ExposedPorts: map[string]struct{}{Port: {}},
		Labels:       Labels(spec),
		StopSignal:   "SIGTERM",
	}
	return mutate.ConfigFile(img, cf)
}

// checkStatic returns an error unless the file at path is a Linux ELF
// executable without an interpreter (dynamic loader): scratch has none.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("ociimage: the binary %s is not a Linux executable (build it with GOOS=linux): %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("ociimage: %s is linked dynamically: build it with CGO_ENABLED=0", path)
		}
	}
	return nil
}

// entry is a file or directory of the layer.
type entry struct {
	name     string
	mode     int64
	uid, gid int
	dir      bool
	// from is the file whose content it has; data, the content otherwise.
	from string
	data []byte
}

// rootfs returns the layer as an uncompressed tar: directories before
// their contents, in a fixed order, every time spec.Created.
func rootfs(spec Spec) ([]byte, error) {
	dir := func(name string, mode int64) entry { return entry{name: name, mode: mode, dir: true} }
	file := func(name, from string, mode int64) entry { return entry{name: name, from: from, mode: mode} }
	entries := []entry{
		dir("data", 0o755), dir("etc", 0o755),
	}
	for _, f := range EtcFiles {
		entries = append(entries, file("etc/"+f, path.Join(spec.EtcDir, f), 0o644))
	}
	entries = append(entries, dir("etc/ssl", 0o755), dir("etc/ssl/certs", 0o755), file(CABundlePath[1:], spec.CABundle, 0o644),
		dir("tmp", 0o1777), dir("usr", 0o755), dir("usr/local", 0o755), dir("usr/local/bin", 0o755),
		file(BinaryPath[1:], spec.Binary, 0o755), dir("usr/share", 0o755), dir("usr/share/doc", 0o755), dir("usr/share/doc/lancens", 0o755))
	for _, d := range spec.Docs {
		entries = append(entries, file("usr/share/doc/lancens/"+path.Base(d), d, 0o644))
	}
	entries[0].uid, entries[0].gid = UID, GID // /data belongs to lancens

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: spec.Created}
		if e.dir {
			h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
		} else {
			h.Typeflag = tar.TypeReg
			data := e.data
			if e.from != "" {
				var err error
				if data, err = os.ReadFile(e.from); err != nil {
					return nil, fmt.Errorf("ociimage: %w", err)
				}
			}
			if len(data) == 0 {
				return nil, fmt.Errorf("ociimage: %s is empty", e.from)
			}
			h.Size = int64(len(data))
			e.data = data
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
