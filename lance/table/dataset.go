package table

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancens/lancens/lance/blob"
)

// Options configure how a dataset is opened and written.
type Options struct {
	// URI is the dataset root's location as Lance records it in base
	// paths ("s3://bucket/path/t.lance", or an absolute local path): a
	// branch refers to its parent's files through it, so reading a branch
	// and creating one need it.
	URI string
	// OpenBase opens the store of a base path other than the dataset's
	// own root (a shallow clone's source); nil refuses such files with
	// ErrUnsupported.
	OpenBase func(ctx context.Context, path string) (blob.Store, error)
	// Committer publishes new versions; nil is PutIfAbsentCommitter.
	Committer Committer
	// WriterVersion is recorded in the manifests this package writes;
	// the zero value is DefaultWriterVersion.
	WriterVersion WriterVersion
	// MaxManifestBytes bounds manifest files read; 0 is
	// DefaultMaxManifestBytes.
	MaxManifestBytes int64
	// Now is the clock of commit timestamps and cleanup; nil is time.Now.
	Now func() time.Time
}

// DefaultWriterVersion is what manifests written by this package record as
// their writer.
var DefaultWriterVersion = WriterVersion{Library: "lancens", Version: "0.1.0"}

func (o *Options) committer() Committer {
	if o.Committer == nil {
		return PutIfAbsentCommitter{}
	}
	return o.Committer
}

func (o *Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

func (o *Options) maxManifestBytes() int64 {
	if o.MaxManifestBytes <= 0 {
		return DefaultMaxManifestBytes
	}
	return o.MaxManifestBytes
}

func (o *Options) writerVersion() WriterVersion {
	if o.WriterVersion.Library == "" {
		return DefaultWriterVersion
	}
	return o.WriterVersion
}

// Dataset is one version of a Lance dataset, on main or on a branch. A
// Dataset does not change: operations return the Dataset of the version
// they commit. Its methods are safe for concurrent use.
type Dataset struct {
	// root holds the dataset root's objects; store the branch's (the
	// same for main).
	root, store blob.Store
	opts        Options
	m           *Manifest
	at          VersionInfo
}

// Open returns the newest version of the dataset whose root is root, on
// main. It returns an error wrapping ErrNotFound when root holds no
// dataset, ErrCorrupt for a malformed manifest and ErrUnsupported for a
// dataset needing features this package does not implement.
func Open(ctx context.Context, root blob.Store, opts Options) (*Dataset, error) {
	return OpenBranch(ctx, root, "", opts)
}

// OpenBranch returns the newest version of a branch of the dataset at
// root ("" or "main" is main). It returns the errors of Open, and
// ErrInvalid for a malformed branch name.
func OpenBranch(ctx context.Context, root blob.Store, branch string, opts Options) (*Dataset, error) {
	store, err := branchStore(root, branch)
	if err != nil {
		return nil, err
	}
	d := &Dataset{root: root, store: store, opts: opts}
	return d.checkoutLatest(ctx, normalizeBranch(branch))
}

// OpenVersion returns version v of a branch of the dataset at root ("" or
// "main" is main) without asking which version is the newest: for a
// catalog that already knows the version it wants. It returns an error
// wrapping ErrNotFound when the version does not exist, and the other
// errors of OpenBranch.
func OpenVersion(ctx context.Context, root blob.Store, branch string, v uint64, opts Options) (*Dataset, error) {
	store, err := branchStore(root, branch)
	if err != nil {
		return nil, err
	}
	d := &Dataset{root: root, store: store, opts: opts}
	info, err := findVersion(ctx, store, v)
	if err != nil {
		return nil, err
	}
	return d.load(ctx, info, normalizeBranch(branch))
}

// WithOptions returns the same version of the dataset with other options:
// a version opened for reading, given the Committer its next write goes
// through, say. The manifest is shared, not read again.
func (d *Dataset) WithOptions(opts Options) *Dataset {
	c := *d
	c.opts = opts
	return &c
}

// Manifest returns the version's manifest, which the caller must not
// change.
func (d *Dataset) Manifest() *Manifest { return d.m }

// Version returns the version number.
func (d *Dataset) Version() uint64 { return d.m.Version }

// Branch returns the branch of the version, "" for main.
func (d *Dataset) Branch() string { return d.m.Branch }

// ManifestInfo returns where the version's manifest is stored, below the
// branch's root.
func (d *Dataset) ManifestInfo() VersionInfo { return d.at }

// Root returns the store of the dataset's root (main's).
func (d *Dataset) Root() blob.Store { return d.root }

// Store returns the store new files of the version's branch go to (data
// files for WriteFragments, say): Root on main, tree/<branch>/ below it on
// a branch.
func (d *Dataset) Store() blob.Store { return d.store }

// Checkout returns version v of the same branch. It returns an error
// wrapping ErrNotFound when the version does not exist (or was cleaned
// up), and the errors of Open.
func (d *Dataset) Checkout(ctx context.Context, v uint64) (*Dataset, error) {
	info, err := findVersion(ctx, d.store, v)
	if err != nil {
		return nil, err
	}
	return d.load(ctx, info, d.m.Branch)
}

// CheckoutLatest returns the newest version of the same branch, which may
// be d's. It returns the errors of Open.
func (d *Dataset) CheckoutLatest(ctx context.Context) (*Dataset, error) {
	return d.checkoutLatest(ctx, d.m.Branch)
}

// CheckoutBranch returns the newest version of branch ("" or "main" for
// main). It returns the errors of OpenBranch.
func (d *Dataset) CheckoutBranch(ctx context.Context, branch string) (*Dataset, error) {
	return OpenBranch(ctx, d.root, branch, d.opts)
}

func (d *Dataset) checkoutLatest(ctx context.Context, branch string) (*Dataset, error) {
	var info VersionInfo
	var err error
	if r, ok := d.opts.committer().(VersionResolver); ok {
		var v uint64
		if v, err = r.LatestVersion(ctx, branch); err == nil {
			info, err = findVersion(ctx, d.store, v)
		}
	} else {
		info, err = latestVersion(ctx, d.store)
	}
	if err != nil {
		return nil, err
	}
	return d.load(ctx, info, branch)
}

// Versions lists the stored versions of the dataset's branch, oldest
// first. It returns the store's listing error.
func (d *Dataset) Versions(ctx context.Context) ([]VersionInfo, error) {
	return listVersions(ctx, d.store)
}

// load reads the manifest at info and returns its Dataset; the manifest
// must belong to branch.
func (d *Dataset) load(ctx context.Context, info VersionInfo, branch string) (*Dataset, error) {
	m, err := readManifest(ctx, d.store, info, d.opts.maxManifestBytes())
	if err != nil {
		return nil, err
	}
	if m.Branch != branch {
		return nil, corruptf("manifest %s belongs to branch %q, not %q", info.Path, m.Branch, branch)
	}
	return &Dataset{root: d.root, store: d.store, opts: d.opts, m: m, at: info}, nil
}

// readManifest reads and decodes the manifest at info, which must be the
// version info names.
func readManifest(ctx context.Context, s blob.Store, info VersionInfo, limit int64) (*Manifest, error) {
	data, err := blob.ReadAll(ctx, s, info.Path, limit)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, fmt.Errorf("%w: version %d (%v)", ErrNotFound, info.Version, err)
	}
	if err != nil {
		return nil, err
	}
	m, err := DecodeManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", info.Path, err)
	}
	if m.Version != info.Version {
		return nil, corruptf("%s holds version %d", info.Path, m.Version)
	}
	return m, nil
}

// ReadVersion returns the manifest of version v of the dataset's branch
// without opening it as a Dataset. It returns the errors of Checkout.
func (d *Dataset) ReadVersion(ctx context.Context, v uint64) (*Manifest, error) {
	if v == d.m.Version {
		return d.m, nil
	}
	info, err := findVersion(ctx, d.store, v)
	if err != nil {
		return nil, err
	}
	return readManifest(ctx, d.store, info, d.opts.maxManifestBytes())
}

// DataFile returns the store and path a fragment's data file is read
// from. It returns an error wrapping ErrCorrupt for a base id the
// manifest does not define and ErrUnsupported for a base path this
// dataset cannot reach (see Options).
func (d *Dataset) DataFile(ctx context.Context, f *DataFile) (blob.Store, string, error) {
	return d.resolve(ctx, f.BaseID, "data/", f.Path)
}

// Deletions returns the offsets of f's deleted rows (empty when it has no
// deletion file). It returns the errors of DecodeDeletions, an error
// wrapping ErrCorrupt when the manifest's count of deleted rows disagrees
// with the file, and those of reaching the file (see DataFile).
func (d *Dataset) Deletions(ctx context.Context, f *Fragment) (*roaring.Bitmap, error) {
	if f.Deletion == nil {
		return roaring.New(), nil
	}
	s, p, err := d.resolve(ctx, f.Deletion.BaseID, deletionsDir, deletionName(f.ID, f.Deletion))
	if err != nil {
		return nil, err
	}
	return readDeletionFile(ctx, s, p, f)
}

// IndexDir returns the store and directory (ending in "/") of an index's
// files. It returns the errors of DataFile.
func (d *Dataset) IndexDir(ctx context.Context, ix *Index) (blob.Store, string, error) {
	return d.resolve(ctx, ix.BaseID, "_indices/", ix.UUID+"/")
}

// resolve returns the store and path of a file at rel below sub (data/,
// _indices/) of the root the base id names (the branch's own root when
// nil).
func (d *Dataset) resolve(ctx context.Context, baseID *uint32, sub, rel string) (blob.Store, string, error) {
	if baseID == nil {
		return d.store, sub + rel, nil
	}
	for _, bp := range d.m.BasePaths {
		if bp.ID != *baseID {
			continue
		}
		s, err := d.baseStore(ctx, bp.Path)
		if err != nil {
			return nil, "", err
		}
		if !bp.IsDatasetRoot {
			return s, rel, nil
		}
		return s, sub + rel, nil
	}
	return nil, "", corruptf("base path id %d is not in the manifest", *baseID)
}

// baseStore returns the store at a base path: the dataset's root or one
// of its branches when the path is below Options.URI, else what
// Options.OpenBase opens.
func (d *Dataset) baseStore(ctx context.Context, p string) (blob.Store, error) {
	if uri := normalizeURI(d.opts.URI); uri != "" {
		p := normalizeURI(p)
		if p == uri {
			return d.root, nil
		}
		if rest, ok := strings.CutPrefix(p, uri+"/"); ok {
			return blob.Sub(d.root, rest), nil
		}
	}
	if d.opts.OpenBase != nil {
		return d.opts.OpenBase(ctx, p)
	}
	return nil, unsupportedf("files under base path %q, which is not the dataset's (Options.URI %q) and no OpenBase is set", p, d.opts.URI)
}

// normalizeURI drops what does not change where a location is: a
// file:// scheme and trailing slashes.
func normalizeURI(u string) string {
	u = strings.TrimPrefix(u, "file://")
	return strings.TrimRight(u, "/")
}
