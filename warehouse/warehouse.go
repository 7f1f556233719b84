// Package warehouse manages where table data lives: the local directory or
// object-store prefix where Lance clients write the data of tables lancens
// declares, and the external roots an operator allows tables to be
// registered in. It chooses and checks table locations, publishes the
// manifests clients commit, and deletes the data of dropped tables — never
// touching anything outside a table's own location.
package warehouse

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lancens/lancens/objstore"
	"github.com/lancens/lancens/store"
)

// Warehouse is a root for table data — a local directory or an
// object-store prefix — plus the other roots table locations may lie in.
type Warehouse struct {
	// root is the warehouse: a directory (absolute, symbolic links
	// resolved) or an object-store URI.
	root string
	// roots are the places a table location may lie in: the warehouse
	// first, then the external roots.
	roots []root
	// s3 reaches the object store, when the warehouse is on one; lancens
	// then publishes manifests and deletes data of the tables whose
	// locations have its scheme.
	s3 *objstore.S3
}

// root is one place table locations may lie in: a local directory (dir,
// absolute with symbolic links resolved) or a prefix on object storage
// (scheme, host and a cleaned path, "/" for a whole bucket).
type root struct {
	dir                string
	scheme, host, path string
}

func (r root) String() string {
	if r.dir != "" {
		return r.dir
	}
	return r.scheme + "://" + r.host + strings.TrimSuffix(r.path, "/")
}

// objectStoreSchemes are the URI schemes a warehouse can live on.
var objectStoreSchemes = []string{"s3"}

// OpenStore returns the warehouse at location: a local directory (see
// Open), or an object-store prefix such as s3://bucket/prefix, reached
// with the storage options opts (Lance's keys: aws_endpoint, aws_region,
// aws_access_key_id, ...), which only an object-store warehouse takes. It
// checks at once that the store is reachable, the bucket exists, the
// credentials may write it and the store honours conditional writes.
// Returns an error naming the option or the location at fault otherwise.
func OpenStore(ctx context.Context, location string, opts objstore.Options, externalRoots ...string) (*Warehouse, error) {
	if !isURI(location) || strings.HasPrefix(location, "file://") {
		if len(opts) > 0 {
			return nil, errors.New("warehouse: storage options apply to a warehouse on object storage (such as --warehouse s3://bucket/prefix), not to the local directory " + location)
		}
		if p, ok := LocalPath(location); ok {
			location = p
		}
		return Open(location, externalRoots...)
	}
	r, err := parseRoot(location)
	if err != nil {
		return nil, fmt.Errorf("warehouse %q: %w", location, err)
	}
	if !slices.Contains(objectStoreSchemes, r.scheme) {
		return nil, fmt.Errorf("warehouse %q: object storage other than s3:// is not supported", location)
	}
	client, err := objstore.NewS3(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("warehouse %s: %w", r, err)
	}
	if err := client.Bucket(r.host).Check(ctx, strings.Trim(r.path, "/")); err != nil {
		return nil, fmt.Errorf("warehouse %s: %w", r, err)
	}
	w := &Warehouse{root: r.String(), roots: []root{r}, s3: client}
	for _, ext := range externalRoots {
		r, err := parseRoot(ext)
		if err != nil {
			return nil, fmt.Errorf("warehouse: external root %q: %w", ext, err)
		}
		w.roots = append(w.roots, r)
	}
	return w, nil
}

// Reaches reports whether lancens reaches the files of the table at
// location, to publish its manifests and delete its data: on local disk,
// or on the object store the warehouse is on.
func (w *Warehouse) Reaches(location string) bool {
	_, local := LocalPath(location)
	return local || w.OnObjectStore(location)
}

// OnObjectStore reports whether location lies on the object store the
// warehouse is on: lancens then reaches its files, and vends storage
// options for it.
func (w *Warehouse) OnObjectStore(location string) bool {
	if w.s3 == nil || !isURI(location) {
		return false
	}
	u, err := url.Parse(location)
	return err == nil && strings.EqualFold(u.Scheme, w.roots[0].scheme) && u.Host != ""
}

// Open returns the warehouse at dir, creating the directory if needed.
// Table locations must lie inside it or inside one of externalRoots: local
// directories, which must exist, or object-store prefixes such as
// s3://bucket/prefix. It returns an error if dir cannot be made absolute or
// created, or if an external root is malformed or missing.
func Open(dir string, externalRoots ...string) (*Warehouse, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("warehouse: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("warehouse: %w", err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, fmt.Errorf("warehouse: %w", err)
	}
	w := &Warehouse{root: abs, roots: []root{{dir: abs}}}
	for _, ext := range externalRoots {
		r, err := parseRoot(ext)
		if err != nil {
			return nil, fmt.Errorf("warehouse: external root %q: %w", ext, err)
		}
		w.roots = append(w.roots, r)
	}
	return w, nil
}

// parseRoot reads an external root: an object-store URI with a bucket, or a
// local directory (a path or a file:// URI) that exists.
func parseRoot(s string) (root, error) {
	if err := checkText(s); err != nil {
		return root{}, err
	}
	if isURI(s) && !strings.HasPrefix(s, "file://") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return root{}, errors.New("an object-store root needs a scheme and a bucket, as in s3://bucket/prefix")
		}
		if hasDotDot(u.Path) {
			return root{}, errors.New("must not contain '..'")
		}
		return root{scheme: strings.ToLower(u.Scheme), host: u.Host, path: cleanURIPath(u.Path)}, nil
	}
	p, ok := LocalPath(s)
	if !ok {
		abs, err := filepath.Abs(s)
		if err != nil {
			return root{}, err
		}
		p = abs
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return root{}, err
	}
	if info, err := os.Stat(real); err != nil || !info.IsDir() {
		return root{}, errors.New("not a directory")
	}
	return root{dir: real}, nil
}

// Root returns the warehouse: the absolute path of its directory, symbolic
// links resolved, or its object-store URI.
func (w *Warehouse) Root() string { return w.root }

// Allocate returns a new location for table name in namespace ns: a
// directory (or prefix) under the root that no other table uses, named
// after the table so people can find it. It returns InvalidInput (13) when
// the directory would be reached through a symbolic link that leaves the
// warehouse.
func (w *Warehouse) Allocate(ns []string, name string) (string, error) {
	parts := []string{}
	for _, n := range ns {
		parts = append(parts, sanitize(n))
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	parts = append(parts, sanitize(name)+"-"+hex.EncodeToString(b[:])+".lance")
	loc, _, err := w.Resolve(path.Join(parts...))
	return loc, err
}

// NamespaceLocation returns the directory (or prefix) under the root where
// Allocate places the tables of namespace ns, and the directories of the
// namespaces inside it: the root itself for the root namespace.
func (w *Warehouse) NamespaceLocation(ns []string) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = sanitize(n)
	}
	if w.s3 != nil {
		return strings.TrimSuffix(w.root, "/") + "/" + path.Join(parts...)
	}
	return filepath.Join(append([]string{w.root}, parts...)...)
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
// record, and whether lancens owns it (deletes it when the table is
// dropped). A relative path is placed under the warehouse, and lancens then
// owns it. A local location (a path or a file:// URI) is recorded as its
// real path: symbolic links in its longest existing prefix resolved. Other
// URIs are kept as given.
//
// The location must lie strictly inside the warehouse or an external root,
// after resolving symbolic links. It returns InvalidInput (13) otherwise,
// and for an empty location, one with a ".." element or a control
// character, or a malformed URI.
func (w *Warehouse) Resolve(location string) (string, bool, error) {
	if strings.TrimSpace(location) == "" {
		return "", false, store.Errorf(store.CodeInvalidInput, "location must not be empty")
	}
	if err := CheckPathText("location", location); err != nil {
		return "", false, err
	}
	if isURI(location) && !strings.HasPrefix(location, "file://") {
		u, err := url.Parse(location)
		if err != nil || u.Scheme == "" {
			return "", false, store.Errorf(store.CodeInvalidInput, "malformed location URI %q", location)
		}
		if hasDotDot(u.Path) {
			return "", false, store.Errorf(store.CodeInvalidInput, "location %q must not contain '..'", location)
		}
		if err := w.checkURI(location, u); err != nil {
			return "", false, err
		}
		return location, false, nil
	}
	if w.s3 != nil && !filepath.IsAbs(location) && !strings.HasPrefix(location, "file://") {
		return w.resolveRelativeURI(location)
	}
	p, relative := location, false
	if strings.HasPrefix(location, "file://") {
		var ok bool
		if p, ok = LocalPath(location); !ok {
			return "", false, store.Errorf(store.CodeInvalidInput, "file location %q must be absolute", location)
		}
	}
	if hasDotDot(p) {
		return "", false, store.Errorf(store.CodeInvalidInput, "location %q must not contain '..'", location)
	}
	if !filepath.IsAbs(p) {
		p, relative = filepath.Join(w.root, p), true
	}
	real, err := w.checkLocal(location, filepath.Clean(p))
	if err != nil {
		return "", false, err
	}
	return real, relative && within(w.root, real), nil
}

// resolveRelativeURI places relative location rel under an object-store
// warehouse. Returns InvalidInput (13) for a location with a ".." element
// or that is the warehouse itself.
func (w *Warehouse) resolveRelativeURI(rel string) (string, bool, error) {
	if hasDotDot(rel) {
		return "", false, store.Errorf(store.CodeInvalidInput, "location %q must not contain '..'", rel)
	}
	r := w.roots[0]
	loc := r.scheme + "://" + r.host + strings.TrimSuffix(cleanURIPath(r.path+filepath.ToSlash(rel)), "/")
	u, err := url.Parse(loc)
	if err != nil {
		return "", false, store.Errorf(store.CodeInvalidInput, "malformed location %q", rel)
	}
	if err := w.checkURI(rel, u); err != nil {
		return "", false, err
	}
	return loc, true, nil
}

// checkLocal returns the real path of local location p (as the client
// wrote it: original) after checking it lies strictly inside a local root.
// Returns InvalidInput (13) otherwise.
func (w *Warehouse) checkLocal(original, p string) (string, error) {
	real, err := resolveExisting(p)
	if err != nil {
		return "", store.Errorf(store.CodeInvalidInput, "location %q cannot be resolved: %v", original, err)
	}
	if err := w.checkInRoot(original, real); err != nil {
		return "", err
	}
	return real, nil
}

// checkInRoot checks that the real path real (of location original) lies
// strictly inside a local root. Returns InvalidInput (13) otherwise.
func (w *Warehouse) checkInRoot(original, real string) error {
	for _, r := range w.roots {
		if r.dir == "" {
			continue
		}
		if real == r.dir {
			return store.Errorf(store.CodeInvalidInput, "location %q is the root %q itself; a table needs a directory of its own inside it", original, r.dir)
		}
		if within(r.dir, real) {
			return nil
		}
	}
	return w.outside(original, real)
}

// uriWildcards are characters an object-store location may not hold:
// access policies (IAM resources and conditions) read * and ? as
// wildcards and $ as a variable, so credentials vended for such a table
// would reach other tables' objects.
const uriWildcards = "*?$"

// checkURI checks that an object-store location lies strictly inside an
// object-store root and holds no query, fragment or policy wildcard.
// Returns InvalidInput (13) otherwise.
func (w *Warehouse) checkURI(original string, u *url.URL) error {
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(u.Path, uriWildcards) {
		return store.Errorf(store.CodeInvalidInput, "location %q: an object-store location may not hold ?, #, * or $", original)
	}
	scheme, p := strings.ToLower(u.Scheme), cleanURIPath(u.Path)
	for _, r := range w.roots {
		if r.dir != "" || r.scheme != scheme || r.host != u.Host {
			continue
		}
		if p == r.path {
			return store.Errorf(store.CodeInvalidInput, "location %q is the root %q itself; a table needs a directory of its own inside it", original, r)
		}
		if strings.HasPrefix(p, r.path) {
			return nil
		}
	}
	return w.outside(original, original)
}

func (w *Warehouse) outside(original, real string) error {
	names := make([]string, len(w.roots))
	for i, r := range w.roots {
		names[i] = r.String()
	}
	shown := fmt.Sprintf("%q", original)
	if real != original {
		shown += fmt.Sprintf(" (really %q)", real)
	}
	return store.Errorf(store.CodeInvalidInput, "location %s is outside the warehouse and the external roots (%s); "+
		"an operator can allow more with --external-root", shown, strings.Join(names, ", "))
}

// cleanURIPath returns an object-store path cleaned, starting and ending
// with "/", so that prefix comparison respects path elements.
func cleanURIPath(p string) string {
	c := path.Clean("/" + p)
	if c != "/" {
		c += "/"
	}
	return c
}

func isURI(s string) bool { return strings.Contains(s, "://") }

// CheckPathText checks a path or URI a client sent as field what: it
// returns InvalidInput (13) for text that is not valid UTF-8 or holds a
// control character (NUL included), which no path lancens records has.
func CheckPathText(what, s string) error {
	if err := checkText(s); err != nil {
		return store.Errorf(store.CodeInvalidInput, "%s %q: %v", what, s, err)
	}
	return nil
}

func checkText(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("not valid UTF-8")
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return errors.New("contains a control character")
	}
	return nil
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

// Remove deletes the files of the table at location, which must lie
// strictly inside the warehouse: a directory reached through no symbolic
// link, or every object under an object-store prefix. Nothing there is not
// an error. It returns an error for any other location, whatever it is,
// and deletes nothing then.
func (w *Warehouse) Remove(ctx context.Context, location string) error {
	if w.s3 != nil {
		return w.removeObjects(ctx, location)
	}
	p, ok := LocalPath(location)
	if !ok {
		return fmt.Errorf("warehouse: refusing to delete non-local location %q", location)
	}
	if !within(w.root, p) {
		return fmt.Errorf("warehouse: refusing to delete %q, which is outside %q", p, w.root)
	}
	if err := noLinks(p); err != nil {
		return fmt.Errorf("warehouse: refusing to delete %q: %w", p, err)
	}
	// Through the parent's handle: a link swapped in after the check above
	// cannot redirect the deletion, and RemoveAll never follows links.
	if err := objstore.NewDir(filepath.Dir(p)).DeletePrefix(ctx, filepath.Base(p)+"/"); err != nil {
		return fmt.Errorf("warehouse: %w", err)
	}
	return nil
}

// removeObjects deletes every object under location, a prefix strictly
// inside an object-store warehouse.
func (w *Warehouse) removeObjects(ctx context.Context, location string) error {
	r := w.roots[0]
	u, err := url.Parse(location)
	if err != nil || hasDotDot(u.Path) || !strings.EqualFold(u.Scheme, r.scheme) || u.Host != r.host {
		return fmt.Errorf("warehouse: refusing to delete %q, which is outside %s", location, r)
	}
	p := cleanURIPath(u.Path)
	if p == r.path || !strings.HasPrefix(p, r.path) {
		return fmt.Errorf("warehouse: refusing to delete %q, which is not inside %s", location, r)
	}
	if err := w.s3.Bucket(r.host).DeletePrefix(ctx, strings.TrimPrefix(p, "/")); err != nil {
		return fmt.Errorf("warehouse: %w", err)
	}
	return nil
}

// within reports whether p lies strictly below dir.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolveExisting returns p with the symbolic links of its longest existing
// prefix resolved and the rest appended. It returns an error when that
// prefix ends in a link that cannot be resolved (dangling, or a loop).
func resolveExisting(p string) (string, error) {
	var rest []string
	for cur := p; ; {
		if _, err := os.Lstat(cur); err == nil {
			real, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return "", err
			}
			slices.Reverse(rest)
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
}

// errLink reports a path that a symbolic link redirects.
var errLink = errors.New("it is reached through a symbolic link")

// noLinks returns an error wrapping errLink unless absolute path p is its
// own real path: no symbolic link in its existing prefix.
func noLinks(p string) error {
	real, err := resolveExisting(p)
	if err != nil {
		return fmt.Errorf("%w that cannot be resolved: %v", errLink, err)
	}
	if real != p {
		return fmt.Errorf("%w (to %q)", errLink, real)
	}
	return nil
}
