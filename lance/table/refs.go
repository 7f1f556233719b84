package table

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/lancens/lancens/lance/blob"
)

// Tags and branches are JSON files below the dataset root, laid out as
// Lance 12 writes them:
//
//	_refs/tags/<tag>.json          {"branch":null,"version":3,"createdAt":…,"updatedAt":…,"manifestSize":569,"metadata":{}}
//	_refs/branches/<name>.json     {"parentBranch":null,"identifier":{"version_mapping":[[7,"<hex>"]]},
//	                                "parentVersion":7,"createAt":<unix s>,"manifestSize":752,"metadata":{}}
//	tree/<name>/_versions/…        the branch's own versions (and _transactions/, _deletions/, data/)
//
// A branch name's "/" is "%2F" in its file name and a directory level
// below tree/. A branch starts as a shallow clone of its parent's version:
// its first manifest has the parent version's number and content, with
// every file the parent held pointing back at the parent's root through a
// base path.

const (
	tagsDir     = "_refs/tags/"
	branchesDir = "_refs/branches/"
	treeDir     = "tree/"
	// maxRefBytes bounds a tag or branch file.
	maxRefBytes = 64 << 10
)

// Tag is a name for a version of a branch.
type Tag struct {
	Name string
	// Branch is the tagged version's branch, "" for main.
	Branch  string
	Version uint64
	// ManifestSize is the size of the tagged version's manifest file.
	ManifestSize int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
	Metadata     map[string]string
}

type tagFile struct {
	Branch       *string           `json:"branch"`
	Version      uint64            `json:"version"`
	CreatedAt    *time.Time        `json:"createdAt,omitempty"`
	UpdatedAt    *time.Time        `json:"updatedAt,omitempty"`
	ManifestSize int64             `json:"manifestSize"`
	Metadata     map[string]string `json:"metadata"`
}

// Branch describes a branch of a dataset.
type Branch struct {
	Name string
	// Parent is the branch it was made from, "" for main; ParentVersion
	// the version of Parent it started from.
	Parent        string
	ParentVersion uint64
	CreatedAt     time.Time
	// ManifestSize is the size of the branch's first manifest file.
	ManifestSize int64
	Metadata     map[string]string
}

type branchFile struct {
	ParentBranch  *string           `json:"parentBranch"`
	Identifier    *branchIdentifier `json:"identifier,omitempty"`
	ParentVersion uint64            `json:"parentVersion"`
	CreateAt      int64             `json:"createAt"`
	ManifestSize  int64             `json:"manifestSize"`
	Metadata      map[string]string `json:"metadata"`
}

// branchIdentifier is Lance 12's record of a branch's lineage: pairs of a
// version and an identifier of the branch's history at it. It is carried
// over as read, and written for new branches as Lance 12 does.
type branchIdentifier struct {
	VersionMapping []json.RawMessage `json:"version_mapping"`
}

// ValidTagName returns an error wrapping ErrInvalid unless name is a
// valid tag name: letters, digits, ".", "-" and "_", not starting or
// ending with ".", without "..", not ending in ".lock".
func ValidTagName(name string) error {
	if name == "" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") ||
		strings.Contains(name, "..") || strings.HasSuffix(name, ".lock") || !refChars(name) {
		return invalidf("%q is not a valid tag name", name)
	}
	return nil
}

// ValidBranchName returns an error wrapping ErrInvalid unless name is a
// valid branch name: "/"-separated segments of letters, digits, ".", "-"
// and "_", no empty segment, no "..", not ending in ".lock", not "main".
func ValidBranchName(name string) error {
	if name == "" || name == "main" || strings.HasSuffix(name, ".lock") || strings.Contains(name, "..") {
		return invalidf("%q is not a valid branch name", name)
	}
	for seg := range strings.SplitSeq(name, "/") {
		if seg == "" || !refChars(seg) {
			return invalidf("%q is not a valid branch name", name)
		}
	}
	return nil
}

func refChars(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// normalizeBranch returns "" for main, however it is named.
func normalizeBranch(b string) string {
	if b == "main" {
		return ""
	}
	return b
}

// branchStore returns the store of a branch's objects below root: root
// itself for main. It returns an error wrapping ErrInvalid for a malformed
// branch name.
func branchStore(root blob.Store, branch string) (blob.Store, error) {
	branch = normalizeBranch(branch)
	if branch == "" {
		return root, nil
	}
	if err := ValidBranchName(branch); err != nil {
		return nil, err
	}
	return blob.Sub(root, treeDir+branch), nil
}

func tagPath(name string) string { return tagsDir + name + ".json" }

func branchPath(name string) string {
	return branchesDir + strings.ReplaceAll(url.PathEscape(name), "/", "%2F") + ".json"
}

// Tags returns the dataset's tags, by name. It returns an error wrapping
// ErrCorrupt for a malformed tag file and the store's errors.
func (d *Dataset) Tags(ctx context.Context) ([]Tag, error) {
	var out []Tag
	for info, err := range d.root.List(ctx, tagsDir) {
		if err != nil {
			return nil, err
		}
		name, ok := strings.CutSuffix(strings.TrimPrefix(info.Path, tagsDir), ".json")
		if !ok || ValidTagName(name) != nil {
			continue
		}
		t, err := d.Tag(ctx, name)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Tag) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Tag returns the tag called name. It returns an error wrapping
// ErrNotFound when there is none, ErrInvalid for a malformed name and
// ErrCorrupt for a malformed tag file.
func (d *Dataset) Tag(ctx context.Context, name string) (Tag, error) {
	if err := ValidTagName(name); err != nil {
		return Tag{}, err
	}
	data, err := blob.ReadAll(ctx, d.root, tagPath(name), maxRefBytes)
	if errors.Is(err, blob.ErrNotFound) {
		return Tag{}, fmt.Errorf("%w: tag %q", ErrNotFound, name)
	}
	if err != nil {
		return Tag{}, err
	}
	var f tagFile
	if err := json.Unmarshal(data, &f); err != nil {
		return Tag{}, corruptf("tag %q: %v", name, err)
	}
	t := Tag{Name: name, Version: f.Version, ManifestSize: f.ManifestSize, Metadata: f.Metadata}
	if f.Branch != nil {
		t.Branch = normalizeBranch(*f.Branch)
	}
	if f.CreatedAt != nil {
		t.CreatedAt = *f.CreatedAt
	}
	if f.UpdatedAt != nil {
		t.UpdatedAt = *f.UpdatedAt
	}
	return t, nil
}

// CheckoutTag returns the version the tag called name points at. It
// returns the errors of Tag and of Checkout.
func (d *Dataset) CheckoutTag(ctx context.Context, name string) (*Dataset, error) {
	t, err := d.Tag(ctx, name)
	if err != nil {
		return nil, err
	}
	b, err := d.CheckoutBranch(ctx, t.Branch)
	if err != nil {
		return nil, err
	}
	return b.Checkout(ctx, t.Version)
}

// CreateTag names version of the dataset's branch (d's branch) name. It
// returns an error wrapping ErrExists when the tag exists, ErrInvalid for
// a malformed name, ErrNotFound when the version does not exist, and the
// store's errors.
func (d *Dataset) CreateTag(ctx context.Context, name string, version uint64) error {
	data, err := d.tagFile(ctx, name, version, time.Time{})
	if err != nil {
		return err
	}
	if err := d.root.PutIfAbsent(ctx, tagPath(name), data); err != nil {
		if errors.Is(err, blob.ErrExists) {
			return fmt.Errorf("%w: tag %q", ErrExists, name)
		}
		return err
	}
	return nil
}

// UpdateTag points the existing tag name at version of d's branch. It
// returns the errors of Tag and CreateTag.
func (d *Dataset) UpdateTag(ctx context.Context, name string, version uint64) error {
	old, err := d.Tag(ctx, name)
	if err != nil {
		return err
	}
	data, err := d.tagFile(ctx, name, version, old.CreatedAt)
	if err != nil {
		return err
	}
	return blob.Put(ctx, d.root, tagPath(name), data)
}

// DeleteTag removes the tag name. It returns an error wrapping ErrNotFound
// when there is none, ErrInvalid for a malformed name, and the store's.
func (d *Dataset) DeleteTag(ctx context.Context, name string) error {
	if _, err := d.Tag(ctx, name); err != nil {
		return err
	}
	return d.root.Delete(ctx, tagPath(name))
}

// tagFile returns the content of a tag file naming version of d's branch,
// created at created (now when zero).
func (d *Dataset) tagFile(ctx context.Context, name string, version uint64, created time.Time) ([]byte, error) {
	if err := ValidTagName(name); err != nil {
		return nil, err
	}
	info, err := findVersion(ctx, d.store, version)
	if err != nil {
		return nil, err
	}
	now := d.opts.now().UTC()
	if created.IsZero() {
		created = now
	}
	f := tagFile{Version: version, CreatedAt: &created, UpdatedAt: &now, ManifestSize: info.Size, Metadata: map[string]string{}}
	if d.m.Branch != "" {
		f.Branch = &d.m.Branch
	}
	return json.Marshal(f)
}

// Branches returns the dataset's branches, by name. It returns an error
// wrapping ErrCorrupt for a malformed branch file and the store's errors.
func (d *Dataset) Branches(ctx context.Context) ([]Branch, error) {
	var out []Branch
	for info, err := range d.root.List(ctx, branchesDir) {
		if err != nil {
			return nil, err
		}
		file, ok := strings.CutSuffix(strings.TrimPrefix(info.Path, branchesDir), ".json")
		if !ok {
			continue
		}
		name, err := url.PathUnescape(file)
		if err != nil || ValidBranchName(name) != nil {
			continue
		}
		b, err := d.branch(ctx, name)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b Branch) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (d *Dataset) branch(ctx context.Context, name string) (Branch, error) {
	data, err := blob.ReadAll(ctx, d.root, branchPath(name), maxRefBytes)
	if errors.Is(err, blob.ErrNotFound) {
		return Branch{}, fmt.Errorf("%w: branch %q", ErrNotFound, name)
	}
	if err != nil {
		return Branch{}, err
	}
	var f branchFile
	if err := json.Unmarshal(data, &f); err != nil {
		return Branch{}, corruptf("branch %q: %v", name, err)
	}
	b := Branch{Name: name, ParentVersion: f.ParentVersion, ManifestSize: f.ManifestSize, Metadata: f.Metadata, CreatedAt: time.Unix(f.CreateAt, 0).UTC()}
	if f.ParentBranch != nil {
		b.Parent = normalizeBranch(*f.ParentBranch)
	}
	return b, nil
}

// CreateBranch starts branch name at d's version (of d's branch) and
// returns the branch's Dataset. The branch's first manifest is a shallow
// clone of d's: the same version number and content, with every file of
// d reached through a base path to d's root, which Options.URI must name.
// It returns an error wrapping ErrExists when the branch exists,
// ErrInvalid for a malformed name or a missing Options.URI, and the
// errors of storing files.
func (d *Dataset) CreateBranch(ctx context.Context, name string) (*Dataset, error) {
	if err := ValidBranchName(name); err != nil {
		return nil, err
	}
	if d.opts.URI == "" {
		return nil, invalidf("creating a branch needs the dataset's URI (Options.URI), which its files are reached through")
	}
	if _, err := d.branch(ctx, name); err == nil {
		return nil, fmt.Errorf("%w: branch %q", ErrExists, name)
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	store, err := branchStore(d.root, name)
	if err != nil {
		return nil, err
	}
	if _, err := latestVersion(ctx, store); err == nil {
		return nil, fmt.Errorf("%w: branch %q has versions already", ErrExists, name)
	}

	parentPath := normalizeURI(d.opts.URI)
	if d.m.Branch != "" {
		parentPath += "/" + treeDir + d.m.Branch
	}
	m := d.m.next()
	m.Version = d.m.Version
	m.Branch = name
	baseID := uint32(0)
	for _, bp := range m.BasePaths {
		baseID = max(baseID, bp.ID+1)
	}
	m.BasePaths = append(m.BasePaths, BasePath{ID: baseID, IsDatasetRoot: true, Path: parentPath})
	for _, f := range m.Fragments {
		for i := range f.Files {
			if f.Files[i].BaseID == nil {
				f.Files[i].BaseID = &baseID
			}
		}
		if f.Deletion != nil && f.Deletion.BaseID == nil {
			f.Deletion.BaseID = &baseID
		}
	}
	for _, ix := range m.Indexes {
		if ix.BaseID == nil {
			ix.BaseID = &baseID
		}
	}
	parent := d.m.Branch
	t := &Transaction{ReadVersion: d.m.Version, UUID: newUUID(), Operation: &Clone{
		Shallow: true, RefName: parent, RefVersion: d.m.Version, RefPath: parentPath, Branch: name,
	}}
	data, err := EncodeTransaction(t)
	if err != nil {
		return nil, err
	}
	if err := blob.Put(ctx, store, transactionPath(t), data); err != nil {
		return nil, err
	}
	if err := setFeatures(m, m.ReaderFeatures&FeatureStableRowIDs != 0, m.WriterFeatures&FeatureNoTransactionFiles != 0); err != nil {
		return nil, err
	}
	m.WriterVersion = d.opts.writerVersion()
	m.Timestamp = d.opts.now().UTC()
	m.TransactionFile = transactionName(t)
	m.Transaction = t
	manifest, err := EncodeManifest(m)
	if err != nil {
		return nil, err
	}
	path := ManifestPath(m.Version, NamingV2)
	if err := d.opts.committer().Commit(ctx, &Commit{Store: store, Path: path, Branch: name, Version: m.Version, Manifest: manifest, Transaction: t}); err != nil {
		if errors.Is(err, ErrVersionExists) {
			return nil, fmt.Errorf("%w: branch %q was created concurrently", ErrExists, name)
		}
		return nil, err
	}
	_ = writeVersionHint(ctx, store, m.Version)

	var lineage [16]byte
	_, _ = rand.Read(lineage[:])
	mapping, _ := json.Marshal([]any{d.m.Version, hex.EncodeToString(lineage[:])})
	f := branchFile{
		Identifier:    &branchIdentifier{VersionMapping: []json.RawMessage{mapping}},
		ParentVersion: d.m.Version,
		CreateAt:      d.opts.now().Unix(),
		ManifestSize:  int64(len(manifest)),
		Metadata:      map[string]string{},
	}
	if parent != "" {
		f.ParentBranch = &parent
	}
	ref, _ := json.Marshal(f)
	if err := d.root.PutIfAbsent(ctx, branchPath(name), ref); err != nil {
		if errors.Is(err, blob.ErrExists) {
			return nil, fmt.Errorf("%w: branch %q", ErrExists, name)
		}
		return nil, err
	}
	info := VersionInfo{Version: m.Version, Path: path, Naming: NamingV2, Size: int64(len(manifest)), ModTime: m.Timestamp}
	return &Dataset{root: d.root, store: store, opts: d.opts, m: m, at: info}, nil
}

// DeleteBranch removes branch name: its file and every object below
// tree/<name>/ except those of other branches nested below it. A branch
// other branches were made from is not deleted: they may read its files.
// It returns an error wrapping ErrNotFound when there is no such branch,
// ErrInvalid for a malformed name or a branch with children, and the
// store's errors.
func (d *Dataset) DeleteBranch(ctx context.Context, name string) error {
	if err := ValidBranchName(name); err != nil {
		return err
	}
	if _, err := d.branch(ctx, name); err != nil {
		return err
	}
	all, err := d.Branches(ctx)
	if err != nil {
		return err
	}
	prefix := treeDir + name + "/"
	var nested []string
	for _, b := range all {
		if b.Parent == name {
			return invalidf("branch %q was made from branch %q, which so cannot be deleted", b.Name, name)
		}
		if strings.HasPrefix(b.Name, name+"/") {
			nested = append(nested, treeDir+b.Name+"/")
		}
	}
	if err := d.root.Delete(ctx, branchPath(name)); err != nil {
		return err
	}
	for info, err := range d.root.List(ctx, prefix) {
		if err != nil {
			return err
		}
		if slices.ContainsFunc(nested, func(p string) bool { return strings.HasPrefix(info.Path, p) }) {
			continue
		}
		if err := d.root.Delete(ctx, info.Path); err != nil {
			return err
		}
	}
	return nil
}
