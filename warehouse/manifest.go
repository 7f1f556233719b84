package warehouse

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/lancens/lancens/store"
)

// Manifest is a finalised manifest file of one table version.
type Manifest struct {
	// LocalPath is its path on disk.
	LocalPath string
	// ObjectPath is the path Lance clients use for it: the absolute path
	// without its leading "/" (an object-store path on the local store).
	ObjectPath string
	Size       int64
}

// ObjectPath returns the object-store form of a local path.
func ObjectPath(localPath string) string {
	return strings.TrimPrefix(filepath.ToSlash(localPath), "/")
}

// ManifestPath returns where the manifest of version v of a branch ("" for
// main) of the table at tableDir lives once finalised.
func ManifestPath(tableDir, branch string, v int64, scheme store.NamingScheme) string {
	dir := tableDir
	if branch != "" {
		dir = filepath.Join(tableDir, "tree", filepath.FromSlash(branch))
	}
	return filepath.Join(dir, "_versions", scheme.ManifestFileName(v))
}

// StagedManifest returns the local file a client named as the manifest it
// staged for the table at tableDir. Lance sends an object-store path (the
// absolute path without its leading "/"); absolute paths and file:// URIs
// are accepted too. The file must lie inside the table's directory. Returns
// InvalidInput (13) otherwise.
func StagedManifest(tableDir, manifestPath string) (string, error) {
	p := manifestPath
	switch {
	case strings.HasPrefix(p, "file://"):
		u, err := url.Parse(p)
		if err != nil {
			return "", store.Errorf(store.CodeInvalidInput, "malformed manifest_path %q", manifestPath)
		}
		p = u.Path
	case !strings.HasPrefix(p, "/"):
		p = "/" + p
	}
	if hasDotDot(p) {
		return "", store.Errorf(store.CodeInvalidInput, "manifest_path %q must not contain '..'", manifestPath)
	}
	p = filepath.Clean(filepath.FromSlash(p))
	if !within(tableDir, p) {
		return "", store.Errorf(store.CodeInvalidInput, "manifest_path %q is not inside the table location %q", manifestPath, tableDir)
	}
	return p, nil
}

// Finalize moves the staged manifest to its final name, durably. With
// replace, it replaces any file a failed earlier attempt left there: callers
// pass it only while holding the table's commit lock, having checked that
// the version has no record. Without replace, an existing final file is a
// ConcurrentModification (14). Returns InvalidInput (13) when the staged
// file does not exist.
func Finalize(staged, final string, replace bool) (*Manifest, error) {
	n, err := publish(staged, final, replace)
	if errors.Is(err, fs.ErrExist) {
		return nil, store.Errorf(store.CodeConcurrentModification, "manifest %q already exists", ObjectPath(final))
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, store.Errorf(store.CodeInvalidInput, "staged manifest %q does not exist", ObjectPath(staged))
	}
	if err != nil {
		return nil, err
	}
	return &Manifest{LocalPath: final, ObjectPath: ObjectPath(final), Size: n}, nil
}

// Discard removes a manifest finalised for a commit that did not happen; a
// missing file is not an error.
func Discard(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
