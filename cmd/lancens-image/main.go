// Command lancens-image builds the container image of lancens without a
// container daemon (see internal/ociimage) and writes it as an archive for
// docker load or podman load. `make image` runs it:
//
//	lancens-image -binary bin/linux-amd64/lancens -arch amd64 \
//	  -version v0.3.0 -revision abc123 -tag lancens:v0.3.0 -out bin/lancens-image.tar
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lancens/lancens/internal/ociimage"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "lancens-image:", err)
		}
		os.Exit(2)
	}
}

var errUsage = errors.New("usage")

// run builds the image the command line describes and writes its archive.
// It returns errUsage for a bad command line, or the error that stopped
// the build; a failed build leaves no archive behind.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lancens-image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var spec ociimage.Spec
	fs.StringVar(&spec.Binary, "binary", "", "the lancens binary: static, for linux and -arch (required)")
	fs.StringVar(&spec.Arch, "arch", "", "GOARCH of the binary: amd64, arm64, … (required)")
	fs.StringVar(&spec.EtcDir, "etc", "deploy/image", "directory of the image's passwd, group and nsswitch.conf")
	fs.StringVar(&spec.CABundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "PEM file of the CA certificates to put in the image (Debian's ca-certificates package)")
	docs := fs.String("docs", "LICENSE,NOTICE", "comma-separated files for /usr/share/doc/lancens")
	fs.StringVar(&spec.Version, "version", "", "the version label (required)")
	fs.StringVar(&spec.Revision, "revision", "", "the revision label: the commit built (required)")
	fs.StringVar(&spec.Source, "source", "https://github.com/lancens/lancens", "the source label")
	fs.StringVar(&spec.Licenses, "licenses", "Apache-2.0", "the licenses label (SPDX)")
	created := fs.String("created", "0", "creation time: Unix seconds (the commit's, for reproducible builds) or RFC 3339")
	tag := fs.String("tag", "lancens:dev", "the image's name and tag")
	out := fs.String("out", "", "the archive to write (required)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 || spec.Binary == "" || spec.Arch == "" || *out == "" {
		fmt.Fprintln(stderr, "usage: lancens-image -binary FILE -arch GOARCH -version V -revision R -out FILE [flags]")
		fs.PrintDefaults()
		return errUsage
	}
	var err error
	if spec.Created, err = parseTime(*created); err != nil {
		return err
	}
	for _, d := range strings.Split(*docs, ",") {
		if d = strings.TrimSpace(d); d != "" {
			spec.Docs = append(spec.Docs, d)
		}
	}
	img, err := ociimage.Build(spec)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(*out), "."+filepath.Base(*out)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	w := bufio.NewWriterSize(tmp, 1<<20)
	err = ociimage.WriteArchive(w, img, *tag)
	if err == nil {
		err = w.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s (linux/%s) %s\nload it with: docker load -i %[1]s   or   podman load -i %[1]s\n", *out, *tag, spec.Arch, digest)
	return nil
}

// parseTime reads Unix seconds or an RFC 3339 time.
func parseTime(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad -created %q: want Unix seconds or an RFC 3339 time", s)
	}
	return t.UTC(), nil
}
