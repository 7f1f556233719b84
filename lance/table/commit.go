package table

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/lancens/lancens/lance/blob"
)

// Committer publishes a new version of a dataset: it makes the manifest
// file the version's, atomically, or reports that the version is taken.
// Everything the manifest refers to (data, deletion and transaction files)
// is stored before Commit is called, and nothing is visible to readers of
// the version until Commit succeeds.
//
// PutIfAbsentCommitter publishes with the object store's put-if-absent, as
// Lance does; a catalog that coordinates commits (lancens's) publishes
// through its own protocol and records the version, and may also
// implement VersionResolver so that readers ask it, not the object store,
// which version is the newest.
type Committer interface {
	// Commit publishes c. It returns an error wrapping ErrVersionExists
	// when c.Version already exists (another writer committed it first:
	// the caller checks the other commit and retries on top of it), and
	// any other error when the outcome is unknown or the commit failed.
	Commit(ctx context.Context, c *Commit) error
}

// VersionResolver is implemented by Committers that know the newest
// version of a dataset better than the object store's listing.
type VersionResolver interface {
	// LatestVersion returns the newest version of branch ("" for main).
	// It returns an error wrapping ErrNotFound when there is none.
	LatestVersion(ctx context.Context, branch string) (uint64, error)
}

// Commit is one version to publish.
type Commit struct {
	// Store holds the objects of the branch being committed to (the
	// dataset root for main); Path is where the manifest goes below it,
	// under the dataset's naming scheme.
	Store blob.Store
	Path  string
	// Branch is the branch, "" for main.
	Branch string
	// Version is the version number being committed.
	Version uint64
	// Manifest is the encoded manifest file.
	Manifest []byte
	// Transaction is what the version does; its file is stored already
	// (unless the dataset skips transaction files).
	Transaction *Transaction
}

// PutIfAbsentCommitter publishes a manifest with a conditional put at its
// final name, as Lance does on object stores that support one.
type PutIfAbsentCommitter struct{}

// Commit implements Committer.
func (PutIfAbsentCommitter) Commit(ctx context.Context, c *Commit) error {
	err := c.Store.PutIfAbsent(ctx, c.Path, c.Manifest)
	if errors.Is(err, blob.ErrExists) {
		return fmt.Errorf("%w: version %d (%v)", ErrVersionExists, c.Version, err)
	}
	return err
}

// maxCommitAttempts bounds how often a commit is rebased on concurrent
// commits before giving up with a retryable conflict.
const maxCommitAttempts = 20

// CommitOperation commits op, computed against d's version, as the next
// version of d's branch, with the conflict checks and rebasing every
// operation gets (see commit). It is the building block for operations
// this package has no method for (an Update whose new fragments keep
// stable row ids, a Rewrite planned elsewhere); the files op refers to
// must be stored, and op consistent with d, which only the methods check.
// It returns an error wrapping ErrInvalid for an operation this package
// does not write, and the errors of committing.
func (d *Dataset) CommitOperation(ctx context.Context, op Operation) (*Dataset, error) {
	switch o := op.(type) {
	case *Overwrite:
		if o.Schema == nil {
			return nil, invalidf("an overwrite needs a schema")
		}
	case *Merge:
		if o.Schema == nil {
			return nil, invalidf("a merge needs a schema")
		}
	case *Project:
		if o.Schema == nil {
			return nil, invalidf("a projection needs a schema")
		}
	}
	if _, err := transactionToProto(&Transaction{Operation: op}); err != nil {
		return nil, err
	}
	return d.commit(ctx, &Transaction{Operation: op})
}

// commit makes t, computed against d's version, the next version of d's
// branch and returns its Dataset. The transaction file is stored first;
// then the manifest built from t on top of the newest version is
// published. When another writer took that version number first, the
// transactions committed since t's read version are checked against t:
// if t still applies (see conflict) it is rebuilt on the newest version
// and published again; if not, the error is a *ConflictError. It returns
// an error wrapping ErrUnsupported when the dataset needs writer features
// this package does not implement, and the errors of storing files and of
// the Committer.
func (d *Dataset) commit(ctx context.Context, t *Transaction) (*Dataset, error) {
	if err := checkWritable(d.m); err != nil {
		return nil, err
	}
	t.ReadVersion = d.m.Version
	if t.UUID == "" {
		t.UUID = newUUID()
	}
	return commitTransaction(ctx, d.root, d.store, d.opts, d.m, d.at.Naming, t, nil)
}

// commitTransaction commits t on top of base in store (the branch's root;
// root is the dataset's), naming manifests with naming; base is nil, and
// create set, when t creates the dataset. See Dataset.commit.
func commitTransaction(ctx context.Context, root, store blob.Store, opts Options, base *Manifest, naming Naming, t *Transaction, create *newDataset) (*Dataset, error) {
	noTxnFiles := base != nil && base.WriterFeatures&FeatureNoTransactionFiles != 0
	if !noTxnFiles {
		data, err := EncodeTransaction(t)
		if err != nil {
			return nil, err
		}
		if err := blob.Put(ctx, store, transactionPath(t), data); err != nil {
			return nil, fmt.Errorf("storing the transaction file: %w", err)
		}
	}
	branch := ""
	if base != nil {
		branch = base.Branch
	}
	committer := opts.committer()
	for range maxCommitAttempts {
		next, err := buildManifest(ctx, store, opts, base, t, noTxnFiles, create)
		if err != nil {
			return nil, err
		}
		data, err := EncodeManifest(next)
		if err != nil {
			return nil, err
		}
		c := &Commit{Store: store, Path: ManifestPath(next.Version, naming), Branch: branch, Version: next.Version, Manifest: data, Transaction: t}
		err = committer.Commit(ctx, c)
		if err == nil {
			// The hint only speeds up finding the newest version; readers
			// that find it stale or missing probe and list instead. A
			// catalog that resolves versions needs none (and writing it
			// costs a synced file per commit).
			if _, resolves := committer.(VersionResolver); !resolves {
				_ = writeVersionHint(ctx, store, next.Version)
			}
			info := VersionInfo{Version: next.Version, Path: c.Path, Naming: naming, Size: int64(len(data)), ModTime: next.Timestamp}
			return &Dataset{root: root, store: store, opts: opts, m: next, at: info}, nil
		}
		if !errors.Is(err, ErrVersionExists) {
			return nil, err
		}
		if base == nil {
			return nil, fmt.Errorf("%w: the dataset was created concurrently", ErrExists)
		}
		if base, err = rebase(ctx, store, opts, base, t); err != nil {
			return nil, err
		}
	}
	return nil, &ConflictError{Version: base.Version, Operation: t.Operation.Name(), Other: "commits made meanwhile", Retryable: true}
}

// rebase returns the newest version of store after base, once every
// transaction committed after base has been checked against t. It
// returns a *ConflictError for the first one t conflicts with.
func rebase(ctx context.Context, store blob.Store, opts Options, base *Manifest, t *Transaction) (*Manifest, error) {
	var latest VersionInfo
	var err error
	if r, ok := opts.committer().(VersionResolver); ok {
		var v uint64
		if v, err = r.LatestVersion(ctx, base.Branch); err == nil {
			latest, err = findVersion(ctx, store, v)
		}
	} else {
		latest, err = latestVersion(ctx, store)
	}
	if err != nil {
		return nil, err
	}
	if latest.Version <= base.Version {
		// The version exists but is not visible yet (a listing that lags):
		// look at the very next one.
		latest, err = findVersion(ctx, store, base.Version+1)
		if err != nil {
			return nil, err
		}
	}
	var m *Manifest
	for v := base.Version + 1; v <= latest.Version; v++ {
		info, err := findVersion(ctx, store, v)
		if err != nil {
			return nil, err
		}
		if m, err = readManifest(ctx, store, info, opts.maxManifestBytes()); err != nil {
			return nil, err
		}
		other, err := committedTransaction(ctx, store, m)
		if err != nil {
			return nil, err
		}
		if err := conflict(t, other, v); err != nil {
			return nil, err
		}
	}
	if err := checkWritable(m); err != nil {
		return nil, err
	}
	return m, nil
}

// committedTransaction returns the transaction that made version m: the
// one inline in the manifest, or else its transaction file. A version
// with neither yields an OtherOperation, which conflicts with everything.
func committedTransaction(ctx context.Context, store blob.Store, m *Manifest) (*Transaction, error) {
	if m.Transaction != nil {
		return m.Transaction, nil
	}
	if m.TransactionFile == "" {
		return &Transaction{Operation: &OtherOperation{Kind: "unrecorded"}}, nil
	}
	data, err := blob.ReadAll(ctx, store, "_transactions/"+m.TransactionFile, maxTransactionBytes)
	if errors.Is(err, blob.ErrNotFound) {
		return &Transaction{Operation: &OtherOperation{Kind: "unrecorded"}}, nil
	}
	if err != nil {
		return nil, err
	}
	return DecodeTransaction(data)
}

// newUUID returns a random (version 4) UUID, hyphenated.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b[:])
}
