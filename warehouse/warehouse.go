// Package warehouse manages the local directory where Lance clients write the
// data of tables lancens declares: it chooses and checks table locations,
// finalises the manifests clients commit, and deletes the data of dropped
// tables — never anything outside its root.
package warehouse

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lancens/lancens/store"
)

// Warehouse is a root directory for table data.
type Warehouse struct {
	root string
}

// Open returns the warehouse at root, creating the directory if needed. It
// returns an error if root cannot be made absolute or created.
func Open(root string) (*Warehouse, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("warehouse: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("warehouse: %w", err)
	}
	return &Warehouse{root: abs}, nil
}

// Root returns the absolute path of the warehouse.
func (w *Warehouse) Root() string { return w.root }

// Allocate returns a new location for table name in namespace ns: a
// directory under the root that no other table uses, named after the table
// so people can find it.
func (w *Warehouse) Allocate(ns []string, name string) string {
	parts := []string{w.root}
	for _, n := range ns {
		parts = append(parts, sanitize(n))
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	parts = append(parts, sanitize(name)+"-"+hex.EncodeToString(b[:])+".lance")
	return filepath.Join(parts...)
}

// sanitize keeps a name readable as a path element: letters, digits, '.',
// '-' and '_' stay, anything else becomes '_'.
func sanitize(name string) string {
	var sb strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			sb.WriteRune(r)
		case r == '.' && sb.Len() > 0:
			sb.WriteRune(r)
		default:
			sb.WriteRune('_')
		}
	}
	return sb.String()
}

// Resolve checks a location a client asked for and returns the location to
// record. A URI (s3://, gs://, file://, …) or an absolute path is kept as
// given; a relative path is placed under the root, and lancens then owns it.
// It returns InvalidInput (13) for a location with a ".." element, an empty
// one, or a malformed URI.
func (w *Warehouse) Resolve(location string) (string, bool, error) {
	if strings.TrimSpace(location) == "" {
		return "", false, store.Errorf(store.CodeInvalidInput, "location must not be empty")
	}
	if strings.ContainsRune(location, 0) {
		return "", false, store.Errorf(store.CodeInvalidInput, "location contains a NUL character")
	}
	if strings.Contains(location, "://") {
		u, err := url.Parse(location)
		if err != nil || u.Scheme == "" {
			return "", false, store.Errorf(store.CodeInvalidInput, "malformed location URI %q", location)
		}
		if hasDotDot(u.Path) {
			return "", false, store.Errorf(store.CodeInvalidInput, "location %q must not contain '..'", location)
		}
		if u.Scheme == "file" && (!filepath.IsAbs(u.Path) || (u.Host != "" && u.Host != "localhost")) {
			return "", false, store.Errorf(store.CodeInvalidInput, "file location %q must be absolute", location)
		}
		return location, false, nil
	}
	if hasDotDot(location) {
		return "", false, store.Errorf(store.CodeInvalidInput, "location %q must not contain '..'", location)
	}
	if filepath.IsAbs(location) {
		return filepath.Clean(location), false, nil
	}
	return filepath.Join(w.root, location), true, nil
}

func hasDotDot(p string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")
}

// LocalPath returns the file-system path of a location on the local disk: an
// absolute path or a file:// URI. ok is false for other locations.
func LocalPath(location string) (path string, ok bool) {
	if strings.HasPrefix(location, "file://") {
		u, err := url.Parse(location)
		if err != nil || !filepath.IsAbs(u.Path) || (u.Host != "" && u.Host != "localhost") {
			return "", false
		}
		return filepath.Clean(u.Path), true
	}
	if filepath.IsAbs(location) {
		return filepath.Clean(location), true
	}
	return "", false
}

// TableURI returns a location as a complete URI: local paths become file://
// URIs, URIs are returned as they are.
func TableURI(location string) string {
	if p, ok := LocalPath(location); ok && !strings.HasPrefix(location, "file://") {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return location
}

// Remove deletes the directory at location, which must lie strictly inside
// the root. A missing directory is not an error. It returns an error for a
// location outside the root, whatever it is.
func (w *Warehouse) Remove(location string) error {
	p, ok := LocalPath(location)
	if !ok {
		return fmt.Errorf("warehouse: refusing to delete non-local location %q", location)
	}
	if !w.contains(p) {
		return fmt.Errorf("warehouse: refusing to delete %q, which is outside %q", p, w.root)
	}
	if err := os.RemoveAll(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("warehouse: %w", err)
	}
	return nil
}

// contains reports whether p is strictly inside the root, after resolving
// symbolic links in the root and in p's existing parent.
func (w *Warehouse) contains(p string) bool {
	root, dir := realPath(w.root), realPath(filepath.Dir(p))
	return within(w.root, p) && (dir == root || within(root, dir))
}

// within reports whether p lies strictly below dir.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// publish moves src to dst durably: it syncs src's data, moves it (rename,
// replacing an existing dst, with replace; otherwise a hard link, which fails
// with an fs.ErrExist error when dst exists, then removal of src), and syncs
// the directory. It returns the file's size.
func publish(src, dst string, replace bool) (int64, error) {
	f, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	info, err := f.Stat()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	if replace {
		err = os.Rename(src, dst)
	} else if err = os.Link(src, dst); err == nil {
		err = os.Remove(src)
	}
	if err != nil {
		return 0, err
	}
	return info.Size(), syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
