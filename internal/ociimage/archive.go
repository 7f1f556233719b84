package ociimage

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// WriteArchive writes img, named ref (such as lancens:0.3.0), as one tar
// archive in two layouts at once, as docker save does since Docker 25:
//
//   - an OCI image layout (oci-layout, index.json, blobs/sha256/…), which
//     podman load, skopeo and containerd read, and docker load since 25;
//   - a docker-archive manifest.json naming the same blobs, which every
//     docker load reads (and podman load too).
//
// It returns an error for a ref that is not a valid image reference with
// a tag, or when the image's parts cannot be read or written.
func WriteArchive(w io.Writer, img v1.Image, ref string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("ociimage: image name %q: %w (want NAME:TAG, such as lancens:dev)", ref, err)
	}
	manifest, err := img.RawManifest()
	if err != nil {
		return err
	}
	manifestDigest, err := img.Digest()
	if err != nil {
		return err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	configDigest, err := img.ConfigName()
	if err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	mtime := cf.Created.Time

	tw := tar.NewWriter(w)
	put := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: mtime, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	blob := func(d v1.Hash) string { return "blobs/" + d.Algorithm + "/" + d.Hex }
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: d, Mode: 0o755, ModTime: mtime, Typeflag: tar.TypeDir}); err != nil {
			return err
		}
	}
	if err := put(blob(configDigest), config); err != nil {
		return err
	}
	var layerPaths []string
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		size, err := l.Size()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: blob(d), Mode: 0o644, Size: size, ModTime: mtime, Typeflag: tar.TypeReg}); err != nil {
			rc.Close()
			return err
		}
		_, err = io.Copy(tw, rc)
		rc.Close()
		if err != nil {
			return err
		}
		layerPaths = append(layerPaths, blob(d))
	}
	if err := put(blob(manifestDigest), manifest); err != nil {
		return err
	}
	mediaType, err := img.MediaType()
	if err != nil {
		return err
	}
	index, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: mediaType, Digest: manifestDigest, Size: int64(len(manifest)),
			Annotations: map[string]string{
				// What docker save writes: the full name for containerd and
				// Docker, the tag for OCI tools.
				"io.containerd.image.name":          fullName(tag),
				"org.opencontainers.image.ref.name": tag.TagStr(),
			},
		}},
	})
	if err != nil {
		return err
	}
	dockerManifest, err := json.Marshal([]struct {
		Config   string
		RepoTags []string
		Layers   []string
	}{{Config: blob(configDigest), RepoTags: []string{ref}, Layers: layerPaths}})
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"index.json", index},
		{"manifest.json", dockerManifest},
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
	} {
		if err := put(f.name, f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// fullName returns tag's fully qualified name as Docker writes it
// (docker.io/library/lancens:dev).
func fullName(tag name.Tag) string {
	registry := tag.RegistryStr()
	if registry == name.DefaultRegistry {
		registry = "docker.io"
	}
	return registry + "/" + tag.RepositoryStr() + ":" + tag.TagStr()
}
