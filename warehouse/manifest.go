package warehouse

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
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
	// tableDir is the location of its table.
	tableDir string
	// file identifies the file published, so that Discard removes it and
	// nothing that replaced it.
	file os.FileInfo
}

// NamingScheme says how the final manifest file of a version is named.
type NamingScheme int

// Manifest naming schemes.
const (
	// NamingV2 names version v's manifest with MaxUint64−v in 20 digits, so
	// a lexical listing is newest first.
	NamingV2 NamingScheme = iota
	// NamingV1 names it with v in decimal.
	NamingV1
)

// ParseNamingScheme reads "V1" or "V2"; anything else but "V1" is V2, as in
// Lance itself.
func ParseNamingScheme(s string) NamingScheme {
	if strings.EqualFold(s, "V1") {
		return NamingV1
	}
	return NamingV2
}

// ManifestFileName returns the file name of version v's manifest.
func (n NamingScheme) ManifestFileName(v int64) string {
	if n == NamingV1 {
		return fmt.Sprintf("%d.manifest", v)
	}
	return fmt.Sprintf("%020d.manifest", uint64(math.MaxUint64)-uint64(v))
}

// ObjectPath returns the object-store form of a local path.
func ObjectPath(localPath string) string {
	return strings.TrimPrefix(filepath.ToSlash(localPath), "/")
}

// ManifestPath returns where the manifest of version v of a branch ("" for
// main) of the table at tableDir lives once finalised.
func ManifestPath(tableDir, branch string, v int64, scheme NamingScheme) string {
	dir := tableDir
	if branch != "" {
		dir = filepath.Join(tableDir, "tree", filepath.FromSlash(branch))
	}
	return filepath.Join(dir, "_versions", scheme.ManifestFileName(v))
}

// ManifestPlan says where the manifest a client staged for a version goes
// (see PlanManifest).
type ManifestPlan struct {
	// Path is the manifest path to record for the version.
	Path string
	// tableDir, staged and final are the move that puts the staged
	// manifest at Path; final is "" when there is none to make.
	tableDir, staged, final string
}

// Pending reports whether the staged manifest must still be published
// (moved to its final name) before the version is recorded.
func (p ManifestPlan) Pending() bool { return p.final != "" }

// PlanManifest checks the manifest a client staged (stagedPath) for version
// v of a branch of the table at location, and returns where it goes. A
// table on remote storage records stagedPath as given, with nothing to
// publish; a table on local disk records the final manifest path, with
// nothing to publish when the client staged the manifest there already.
// The staged file must lie inside the table's location, reached through no
// symbolic link, and the location inside the warehouse or an external
// root: otherwise it returns InvalidInput (13).
func (w *Warehouse) PlanManifest(location, stagedPath, branch string, v int64, scheme NamingScheme) (ManifestPlan, error) {
	dir, local := LocalPath(location)
	if !local {
		return ManifestPlan{Path: stagedPath}, nil
	}
	staged, err := StagedManifest(dir, stagedPath)
	if err != nil {
		return ManifestPlan{}, err
	}
	if err := w.CheckStaged(dir, staged); err != nil {
		return ManifestPlan{}, err
	}
	final := ManifestPath(dir, branch, v, scheme)
	p := ManifestPlan{Path: ObjectPath(final)}
	if staged != final {
		p.tableDir, p.staged, p.final = dir, staged, final
	}
	return p, nil
}

// Publish carries out a pending plan: it moves the staged manifest to its
// final name as Finalize does, and returns the errors Finalize returns. A
// plan with nothing pending publishes nothing and returns nil.
func (w *Warehouse) Publish(p ManifestPlan, replace bool) (*Manifest, error) {
	if !p.Pending() {
		return nil, nil
	}
	return w.Finalize(p.tableDir, p.staged, p.final, replace)
}

// StagedManifest returns the local file a client named as the manifest it
// staged for the table at tableDir. Lance sends an object-store path (the
// absolute path without its leading "/"); absolute paths and file:// URIs
// are accepted too. The file must lie inside the table's directory, by
// name; CheckStaged looks at the file itself. Returns InvalidInput (13)
// otherwise, and for a path with a control character or invalid UTF-8.
func StagedManifest(tableDir, manifestPath string) (string, error) {
	if err := CheckPathText("manifest_path", manifestPath); err != nil {
		return "", err
	}
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

// checkTableDir checks that the local table location dir lies strictly
// inside a local root and is reached through no symbolic link. Returns
// InvalidInput (13) otherwise.
func (w *Warehouse) checkTableDir(dir string) error {
	if err := noLinks(dir); err != nil {
		return store.Errorf(store.CodeInvalidInput, "table location %q: %v; lancens does not follow links out of a table's location", dir, err)
	}
	if _, err := w.checkLocal(dir, dir); err != nil {
		return err
	}
	return nil
}

// checkInside checks that p, a path inside table location dir by name, is
// reached through no symbolic link. Returns InvalidInput (13) otherwise.
func checkInside(dir, p, what string) error {
	if err := noLinks(p); err != nil {
		return store.Errorf(store.CodeInvalidInput, "%s %q inside table location %q: %v; lancens does not follow links in a table's location", what, ObjectPath(p), dir, err)
	}
	return nil
}

// CheckStaged checks a staged manifest (from StagedManifest) of the table
// at tableDir without moving it: the table's location must lie inside the
// warehouse or an external root, and neither it nor the staged file may be
// reached through a symbolic link; the staged file, if it exists, must be a
// regular file. Returns InvalidInput (13) otherwise.
func (w *Warehouse) CheckStaged(tableDir, staged string) error {
	if err := w.checkTableDir(tableDir); err != nil {
		return err
	}
	if err := checkInside(tableDir, staged, "staged manifest"); err != nil {
		return err
	}
	info, err := os.Lstat(staged)
	if err == nil && !info.Mode().IsRegular() {
		return store.Errorf(store.CodeInvalidInput, "staged manifest %q is not a regular file", ObjectPath(staged))
	}
	return nil
}

// Finalize moves the staged manifest of the table at tableDir to its final
// name, durably, after the checks of CheckStaged; the final name must be
// reached through no symbolic link either. All file operations go through a
// handle on the table's directory, so a link swapped in meanwhile cannot
// make them leave it. With replace, it replaces any file a failed earlier
// attempt left there: callers pass it only while holding the table's commit
// lock, having checked that the version has no record. Without replace, an
// existing final file is a ConcurrentModification (14). Returns
// InvalidInput (13) when the checks fail or the staged file does not exist.
func (w *Warehouse) Finalize(tableDir, staged, final string, replace bool) (*Manifest, error) {
	if err := w.CheckStaged(tableDir, staged); err != nil {
		return nil, err
	}
	if err := checkInside(tableDir, final, "final manifest"); err != nil {
		return nil, err
	}
	if !within(tableDir, final) {
		return nil, fmt.Errorf("warehouse: final manifest %q is outside %q", final, tableDir)
	}
	dir, err := os.OpenRoot(tableDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, store.Errorf(store.CodeInvalidInput, "staged manifest %q does not exist", ObjectPath(staged))
	}
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	relStaged, _ := filepath.Rel(tableDir, staged)
	relFinal, _ := filepath.Rel(tableDir, final)
	file, err := publish(dir, relStaged, relFinal, replace)
	if errors.Is(err, fs.ErrExist) {
		return nil, store.Errorf(store.CodeConcurrentModification, "manifest %q already exists", ObjectPath(final))
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, store.Errorf(store.CodeInvalidInput, "staged manifest %q does not exist", ObjectPath(staged))
	}
	if err != nil {
		return nil, err
	}
	return &Manifest{LocalPath: final, ObjectPath: ObjectPath(final), Size: file.Size(), tableDir: tableDir, file: file}, nil
}

// errNotRegular reports a staged manifest that was replaced by something
// other than a regular file while it was being published.
var errNotRegular = errors.New("not a regular file")

// publish moves src to dst inside dir durably: it syncs src's data, moves
// it (rename, replacing an existing dst, with replace; otherwise a hard
// link, which fails with an fs.ErrExist error when dst exists, then removal
// of src), and syncs the directory. It returns the file's information.
func publish(dir *os.Root, src, dst string, replace bool) (os.FileInfo, error) {
	f, err := dir.Open(src)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = errNotRegular
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	dstDir := filepath.Dir(dst)
	if err := dir.MkdirAll(dstDir, 0o755); err != nil {
		return nil, err
	}
	if replace {
		err = dir.Rename(src, dst)
	} else if err = dir.Link(src, dst); err == nil {
		err = dir.Remove(src)
	}
	if err != nil {
		return nil, err
	}
	// A link swapped in for the staged file after it was opened is moved
	// as a link: take it out again rather than publish it.
	if moved, err := dir.Lstat(dst); err != nil || !moved.Mode().IsRegular() || !os.SameFile(moved, info) {
		_ = dir.Remove(dst)
		return nil, fmt.Errorf("warehouse: staged manifest changed while it was published: %w", errNotRegular)
	}
	d, err := dir.Open(dstDir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return info, d.Sync()
}

// Discard removes a manifest finalised for a commit that did not happen,
// if it is still the file Finalize published: a file put there since (by
// another process's commit of the version) stays. A missing file is not an
// error.
func (w *Warehouse) Discard(m *Manifest) error {
	dir, err := os.OpenRoot(m.tableDir)
	if err != nil {
		return err
	}
	defer dir.Close()
	rel, err := filepath.Rel(m.tableDir, m.LocalPath)
	if err != nil {
		return err
	}
	current, err := dir.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !os.SameFile(current, m.file) {
		return nil
	}
	if err := dir.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
