package warehouse

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/objstore"
	"github.com/lancens/lancens/store"
)

// MaxManifestBytes bounds the manifests lancens publishes, which it reads
// whole when publishing on object storage.
const MaxManifestBytes = 256 << 20

// ObjectPath returns the object-store form of a local path.
func ObjectPath(localPath string) string {
	return strings.TrimPrefix(filepath.ToSlash(localPath), "/")
}

// ManifestPath returns where the manifest of version v of a branch ("" for
// main) of the table at tableDir lives once finalised.
func ManifestPath(tableDir, branch string, v int64, scheme manifestname.Scheme) string {
	return filepath.Join(tableDir, filepath.FromSlash(manifestKey(branch, v, scheme)))
}

// manifestKey returns the path of a final manifest inside its table's
// location.
func manifestKey(branch string, v int64, scheme manifestname.Scheme) string {
	if branch != "" {
		return path.Join("tree", branch, "_versions", scheme.FileName(v))
	}
	return path.Join("_versions", scheme.FileName(v))
}

// tableFiles is how lancens reaches the files of one table.
type tableFiles struct {
	bucket objstore.Bucket
	// dir is the table's directory on local disk, where bucket is rooted;
	// "" on object storage.
	dir string
	// prefix is the key of the table's location in bucket, ending in "/":
	// "" on local disk.
	prefix string
	// recordPrefix is what comes before a key in the paths Lance clients
	// use: the table directory's object path and "/" on local disk, ""
	// on object storage (keys are already those paths).
	recordPrefix string
	// scheme and bucketName are the store's scheme and the bucket of an
	// object-store location.
	scheme, bucketName string
	location           string
	// local reports a table on local disk.
	local bool
}

// tableFiles returns how to reach the files of the table at location; ok
// is false for a location lancens does not reach (on an object store the
// warehouse is not on), whose commits are recorded as the client names
// them.
func (w *Warehouse) tableFiles(location string) (f tableFiles, ok bool, err error) {
	if dir, local := LocalPath(location); local {
		if err := w.checkTableDir(dir); err != nil {
			return f, false, err
		}
		bucket := disk.Bucket(dir)
		if w.durability == store.DurabilityProcess {
			bucket = objstore.NewDirNoSync(dir)
		}
		return tableFiles{bucket: bucket, dir: dir, recordPrefix: ObjectPath(dir) + "/", location: location, local: true}, true, nil
	}
	if !w.OnObjectStore(location) {
		return f, false, nil
	}
	u, err := url.Parse(location)
	if err != nil || hasDotDot(u.Path) {
		return f, false, store.Errorf(store.CodeInvalidInput, "malformed table location %q", location)
	}
	if err := w.checkURI(location, u); err != nil {
		return f, false, err
	}
	prefix := strings.TrimPrefix(cleanURIPath(u.Path), "/")
	return tableFiles{bucket: w.objects.Bucket(u.Host), prefix: prefix, scheme: w.objects.Scheme(), bucketName: u.Host, location: location}, true, nil
}

// stagedKey returns the key of the manifest a client named as the one it
// staged. Lance sends an object-store path: the absolute path without its
// leading "/" on local disk, the key in the bucket on object storage;
// absolute paths, file:// URIs and URIs of the table's bucket are accepted
// too. The manifest must lie inside the table's location, by name.
// Returns InvalidInput (13) otherwise.
func (f tableFiles) stagedKey(manifestPath string) (string, error) {
	if err := CheckPathText("manifest_path", manifestPath); err != nil {
		return "", err
	}
	p := manifestPath
	if isURI(p) {
		u, err := url.Parse(p)
		if err != nil {
			return "", store.Errorf(store.CodeInvalidInput, "malformed manifest_path %q", manifestPath)
		}
		switch {
		case f.local && u.Scheme == "file" && (u.Host == "" || u.Host == "localhost"):
		case !f.local && strings.EqualFold(u.Scheme, f.scheme) && u.Host == f.bucketName:
		default:
			return "", store.Errorf(store.CodeInvalidInput, "manifest_path %q is not inside the table location %q", manifestPath, f.location)
		}
		p = u.Path
	}
	if hasDotDot(p) {
		return "", store.Errorf(store.CodeInvalidInput, "manifest_path %q must not contain '..'", manifestPath)
	}
	p = path.Clean("/" + filepath.ToSlash(p))[1:]
	base := strings.TrimSuffix(f.recordPrefix+f.prefix, "/")
	if rel, ok := strings.CutPrefix(p, base+"/"); ok && rel != "" {
		return f.prefix + rel, nil
	}
	return "", store.Errorf(store.CodeInvalidInput, "manifest_path %q is not inside the table location %q", manifestPath, f.location)
}

// checkTableDir checks that the local table location dir lies strictly
// inside a local root and is reached through no symbolic link. Returns
// InvalidInput (13) otherwise.
func (w *Warehouse) checkTableDir(dir string) error {
	if err := noLinks(dir); err != nil {
		return store.Errorf(store.CodeInvalidInput, "table location %q: %v; lancens does not follow links out of a table's location", dir, err)
	}
	// dir is its own real path: no need to resolve it again.
	return w.checkInRoot(dir, dir)
}

// checkInside checks that the file at key, inside a local table's
// directory by name, is reached through no symbolic link below that
// directory (tableFiles checked the way to it). Returns InvalidInput (13)
// otherwise.
func (f tableFiles) checkInside(key, what string) error {
	if !f.local {
		return nil
	}
	p := f.dir
	for part := range strings.SplitSeq(key, "/") {
		p = filepath.Join(p, part)
		info, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil // nothing below can be a link yet
		case err != nil:
			return store.Errorf(store.CodeInvalidInput, "%s %q inside table location %q cannot be resolved: %v", what, ObjectPath(p), f.dir, err)
		case info.Mode()&fs.ModeSymlink != 0:
			return store.Errorf(store.CodeInvalidInput, "%s %q inside table location %q: %v; lancens does not follow links in a table's location", what, ObjectPath(p), f.dir, errLink)
		}
	}
	return nil
}

// Publication is the publishing of the manifest a client staged for a
// table version as that version's final manifest. Prepare makes one,
// Publish puts the final manifest in place before the version is
// recorded, and then Settle (recorded) or Discard (refused) ends it.
type Publication struct {
	// ManifestPath is the path to record for the version: the final
	// manifest's, in the form the client named the staged one (see
	// sameForm).
	ManifestPath string
	// Size is the final manifest's size once published; ETag its entity
	// tag on object storage ("" on local disk, where Lance computes tags
	// of its own).
	Size int64
	ETag string

	files tableFiles
	// tag is the final manifest's tag in the bucket, for conditions.
	tag           string
	staged, final string
	// wrote is set when Publish wrote the final manifest (rather than
	// finding it there): Discard may then remove it.
	wrote bool
}

// Prepare checks the manifest a client staged (manifestPath) for version v
// of a branch ("" for main) of the table at location, and returns its
// publication; nil when lancens does not reach the table's files (its
// commits record the staged path as given). On local disk neither the
// table's location nor the staged or final manifest may be reached through
// a symbolic link, and the location must lie inside the warehouse or an
// external root. Returns InvalidInput (13) otherwise, or for a staged
// manifest outside the table's location; Prepare reads and writes nothing.
func (w *Warehouse) Prepare(location, manifestPath, branch string, v int64, scheme manifestname.Scheme) (*Publication, error) {
	f, ok, err := w.tableFiles(location)
	if err != nil || !ok {
		return nil, err
	}
	staged, err := f.stagedKey(manifestPath)
	if err != nil {
		return nil, err
	}
	final := f.prefix + manifestKey(branch, v, scheme)
	if err := f.checkInside(staged, "staged manifest"); err != nil {
		return nil, err
	}
	if err := f.checkInside(final, "final manifest"); err != nil {
		return nil, err
	}
	return &Publication{ManifestPath: sameForm(manifestPath, f.recordPrefix+final), files: f, staged: staged, final: final}, nil
}

// sameForm writes path (an object-store path: a local path without its
// leading "/", or a key in the bucket) in the form the client wrote staged
// in: as an absolute path, a file:// URI or an s3:// URI when staged was
// one, as an object-store path otherwise. Clients then read back the
// paths they wrote.
func sameForm(staged, path string) string {
	if isURI(staged) {
		u, err := url.Parse(staged)
		if err != nil {
			return path
		}
		if strings.EqualFold(u.Scheme, "file") {
			return "file:///" + path
		}
		return u.Scheme + "://" + u.Host + "/" + path
	}
	if strings.HasPrefix(staged, "/") {
		return "/" + path
	}
	return path
}

// Publish puts the staged manifest of p at its final name with a
// conditional write that never replaces another writer's manifest, and
// fills in p's Size and ETag. If the final name already holds the same
// content (an earlier attempt of this very commit), that is kept. If it
// holds other content, replaceOrphan says whether it may be replaced —
// only when that exact content is still there: callers pass it only while
// holding the table's commit lock, having checked that the version has no
// record, so the file is a leftover of a commit that failed. On object
// storage the leftover must moreover carry lancens' mark
// (objstore.MetaPublishedFrom): a manifest another writer put there is
// never replaced. Otherwise it returns ConcurrentModification (14). It returns InvalidInput (13)
// when the staged manifest does not exist or is not a regular file, and
// ServiceUnavailable (17) or Internal (18) when the store fails. On local
// disk the final manifest is synced before Publish returns unless the
// warehouse's commit durability is store.DurabilityProcess (see
// SetCommitDurability): either way, it is there for every reader, and
// for the process after a crash, once Publish returns.
func (w *Warehouse) Publish(ctx context.Context, p *Publication, replaceOrphan bool) error {
	b := p.files.bucket
	if p.staged == p.final {
		info, err := b.Stat(ctx, p.final)
		if err != nil {
			return p.files.storeError("manifest", p.final, err)
		}
		p.published(info)
		return nil
	}
	info, err := b.Publish(ctx, p.staged, p.final, "", MaxManifestBytes)
	if errors.Is(err, objstore.ErrPrecondition) {
		info, err = p.settleTaken(ctx, replaceOrphan)
	} else if err == nil {
		p.wrote = true
	}
	if err != nil {
		return p.files.storeError("staged manifest", p.staged, err)
	}
	p.published(info)
	return nil
}

// Wrote reports whether Publish put the final manifest in place itself,
// rather than finding it there.
func (p *Publication) Wrote() bool { return p.wrote }

func (p *Publication) published(info objstore.Info) {
	p.Size, p.tag = info.Size, info.ETag
	if !p.files.local {
		p.ETag = info.ETag
	}
}

// settleTaken handles a final name that is already taken: kept when it
// holds the staged content, replaced when allowed, refused otherwise.
func (p *Publication) settleTaken(ctx context.Context, replaceOrphan bool) (objstore.Info, error) {
	b := p.files.bucket
	there, info, err := b.Get(ctx, p.final, MaxManifestBytes)
	if errors.Is(err, objstore.ErrNotFound) {
		// Gone since: another attempt removed it; try once more.
		info, err = b.Publish(ctx, p.staged, p.final, "", MaxManifestBytes)
		p.wrote = err == nil
		return info, err
	}
	if err != nil {
		return info, err
	}
	staged, _, err := b.Get(ctx, p.staged, MaxManifestBytes)
	if err != nil {
		return info, err
	}
	if bytes.Equal(there, staged) {
		return info, nil
	}
	if !replaceOrphan {
		return info, store.Errorf(store.CodeConcurrentModification, "manifest %q already exists", p.ManifestPath)
	}
	if !p.files.local && info.PublishedFrom == "" {
		return info, store.Errorf(store.CodeConcurrentModification, "manifest %q exists and was not published by lancens "+
			"(a writer outside lancens committed this version straight to the bucket); lancens never replaces it: "+
			"remove it if it is a leftover", p.ManifestPath)
	}
	info, err = b.Publish(ctx, p.staged, p.final, info.ETag, MaxManifestBytes)
	if errors.Is(err, objstore.ErrPrecondition) {
		return info, store.Errorf(store.CodeConcurrentModification, "manifest %q changed while it was being replaced", p.ManifestPath)
	}
	p.wrote = err == nil
	return info, err
}

// Discard removes the final manifest Publish wrote for a commit whose
// record was then refused, if it still holds what Publish wrote. The
// staged manifest stays for the client. Returns an error when the store
// fails.
func (w *Warehouse) Discard(ctx context.Context, p *Publication) error {
	if !p.wrote {
		return nil
	}
	err := p.files.bucket.Delete(ctx, p.final, p.tag)
	if errors.Is(err, objstore.ErrPrecondition) {
		return nil // someone else's manifest now: not ours to remove
	}
	return err
}

// Settle removes the staged manifest of a publication whose version is
// recorded. Returns an error when the store fails; the commit stands.
func (w *Warehouse) Settle(ctx context.Context, p *Publication) error {
	if p.staged == p.final {
		return nil
	}
	return p.files.bucket.Delete(ctx, p.staged, "")
}

// storeError turns a failure to publish into the error for the client:
// ConcurrentModification (14) for a final name another writer took,
// InvalidInput (13) for a missing or oversized manifest, the error itself
// when it already carries a code, ServiceUnavailable (17) for an object
// store that fails and Internal (18) for a local disk that does.
func (f tableFiles) storeError(what, key string, err error) error {
	var se *store.Error
	switch {
	case errors.As(err, &se):
		return err
	case errors.Is(err, objstore.ErrPrecondition):
		// Another writer took the final name between two steps.
		return &store.Error{Code: store.CodeConcurrentModification, Message: "another writer published this version's manifest at the same time", Cause: err}
	case errors.Is(err, objstore.ErrNotFound):
		return store.Errorf(store.CodeInvalidInput, "%s %q does not exist or is not a regular file", what, f.recordPrefix+key)
	case errors.Is(err, objstore.ErrTooLarge):
		return store.Errorf(store.CodeInvalidInput, "%s %q is larger than %d bytes", what, f.recordPrefix+key, MaxManifestBytes)
	case f.local:
		return &store.Error{Code: store.CodeInternal, Message: "cannot publish the manifest", Cause: err}
	}
	return &store.Error{Code: store.CodeServiceUnavailable, Message: "the object store failed while publishing the manifest; retry the commit", Cause: err}
}

// Blobs returns the blob.Store of the files of the table at location, as
// the Lance packages read and write them: the table's directory on local
// disk, or the objects under its prefix on the warehouse's object store.
// ok is false for a location lancens does not reach (an object store the
// warehouse is not on). It returns InvalidInput (13) for a location the
// warehouse refuses (outside its roots, or reached through a symbolic
// link), and Unsupported (0) on an object store other than S3.
func (w *Warehouse) Blobs(location string) (s blob.Store, ok bool, err error) {
	f, ok, err := w.tableFiles(location)
	if err != nil || !ok {
		return nil, false, err
	}
	if f.local {
		return blob.NewDir(f.dir), true, nil
	}
	if b, isS3 := f.bucket.(*objstore.S3Bucket); isS3 {
		return b.Blobs(f.prefix), true, nil
	}
	return nil, false, store.Errorf(store.CodeUnsupported, "tables on %s:// object stores cannot be read by lancens's Lance engine yet", f.scheme)
}
