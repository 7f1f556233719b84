package ociimage_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/empty"

	"github.com/lancens/lancens/internal/ociimage"
)

// TestBuildRefuses checks what Build will not put in an image: a file that
// is no Linux executable, one linked dynamically (scratch has no loader),
// and a spec without its labels. cmd/lancens-image tests a real build.
func TestBuildRefuses(t *testing.T) {
	notELF := filepath.Join(t.TempDir(), "lancens")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := func(binary string) ociimage.Spec {
		return ociimage.Spec{Binary: binary, Arch: "amd64", EtcDir: "../../deploy/image", CABundle: "../../LICENSE",
			Version: "v1", Revision: "r", Source: "s", Licenses: "Apache-2.0", Created: time.Unix(0, 0)}
	}
	cases := map[string]struct {
		spec ociimage.Spec
		want string
	}{
		"NotELF":    {spec(notELF), "not a Linux executable"},
		"NoVersion": {func() ociimage.Spec { s := spec(notELF); s.Version = ""; return s }(), "version"},
		"Missing":   {spec(filepath.Join(t.TempDir(), "none")), "not a Linux executable"},
	}
	// Debian's coreutils are dynamically linked.
	if _, err := os.Stat("/bin/true"); err == nil {
		cases["Dynamic"] = struct {
			spec ociimage.Spec
			want string
		}{spec("/bin/true"), "linked dynamically"}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ociimage.Build(tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Build: %v, want an error about %q", err, tc.want)
			}
		})
	}
}

func TestWriteArchiveRefusesBadName(t *testing.T) {
	for _, ref := range []string{"", "Lancens:UPPER/x", "lancens:bad tag"} {
		if err := ociimage.WriteArchive(io.Discard, empty.Image, ref); err == nil {
			t.Errorf("WriteArchive accepted the name %q", ref)
		}
	}
}
