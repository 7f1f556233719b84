package table

import (
	"context"
	"strings"
	"time"
)

// CleanupOptions say which old versions Cleanup removes.
type CleanupOptions struct {
	// Before is the cutoff: versions committed before it are removed,
	// except the newest and tagged ones.
	Before time.Time
	// DeleteUnverified also removes files no manifest refers to that are
	// older than Before. Without it such files are removed only when
	// older than UnverifiedAge, because a file no version refers to may
	// belong to a commit in progress.
	DeleteUnverified bool
	// Remove, when set, chooses the versions to remove instead of Before:
	// those it reports true for, except the newest and tagged ones (a
	// catalog that records versions knows which it let go). Before then
	// only bounds the age of the files no version refers to.
	Remove func(version uint64) bool
}

// UnverifiedAge is how old a file no version refers to must be before
// Cleanup removes it without CleanupOptions.DeleteUnverified, as in Lance.
const UnverifiedAge = 7 * 24 * time.Hour

// CleanupStats counts what Cleanup removed.
type CleanupStats struct {
	// Versions counts the manifests removed; Files the other files; Bytes
	// the sizes of both.
	Versions, Files int
	Bytes           int64
	// Rows counts the rows, deleted ones included, of the data files
	// removed that a removed version referred to (a fragment's rows once).
	Rows uint64
}

// Cleanup removes the versions of d's branch committed before
// opts.Before, except the newest version and tagged ones, and then every
// file (data, deletion, transaction and index files) that no remaining
// version of the branch, nor any version of a branch made from it, refers
// to. Removed versions can no longer be checked out. Manifests go first,
// so that a cleanup cut short never leaves a version whose files are
// gone. It returns the errors of listing, reading and deleting objects.
func (d *Dataset) Cleanup(ctx context.Context, opts CleanupOptions) (CleanupStats, error) {
	var stats CleanupStats
	versions, err := listVersions(ctx, d.store)
	if err != nil {
		return stats, err
	}
	tags, err := d.Tags(ctx)
	if err != nil {
		return stats, err
	}
	tagged := map[uint64]bool{}
	for _, t := range tags {
		if t.Branch == d.m.Branch {
			tagged[t.Version] = true
		}
	}
	if len(versions) == 0 {
		return stats, nil
	}
	latest := versions[len(versions)-1].Version
	kept, removed := newFileSet(), newFileSet()
	var doomed []VersionInfo
	for _, v := range versions {
		m, err := readManifest(ctx, d.store, v, d.opts.maxManifestBytes())
		if err != nil {
			return stats, err
		}
		old := m.Timestamp.Before(opts.Before)
		if opts.Remove != nil {
			old = opts.Remove(v.Version)
		}
		old = old && v.Version != latest && !tagged[v.Version]
		if old {
			doomed = append(doomed, v)
			removed.addManifest(m)
		} else {
			kept.addManifest(m)
		}
	}
	if err := d.addBranchReferences(ctx, kept); err != nil {
		return stats, err
	}

	for _, v := range doomed {
		if err := d.store.Delete(ctx, v.Path); err != nil {
			return stats, err
		}
		stats.Versions++
		stats.Bytes += v.Size
	}
	unverifiedBefore := opts.Before
	if limit := d.opts.now().Add(-UnverifiedAge); !opts.DeleteUnverified && limit.Before(unverifiedBefore) {
		unverifiedBefore = limit
	}
	for _, dir := range []string{"data/", deletionsDir, "_transactions/", "_indices/"} {
		for info, err := range d.store.List(ctx, dir) {
			if err != nil {
				return stats, err
			}
			if kept.has(info.Path) {
				continue
			}
			if !removed.has(info.Path) && !info.ModTime.Before(unverifiedBefore) {
				continue
			}
			if err := d.store.Delete(ctx, info.Path); err != nil {
				return stats, err
			}
			stats.Files++
			stats.Bytes += info.Size
			stats.Rows += removed.rows[info.Path]
		}
	}
	return stats, nil
}

// addBranchReferences adds to s the files of d's branch that the
// versions of branches made from it refer to through a base path.
func (d *Dataset) addBranchReferences(ctx context.Context, s *fileSet) error {
	branches, err := d.Branches(ctx)
	if err != nil {
		return err
	}
	self := normalizeURI(d.opts.URI)
	if d.m.Branch != "" {
		self += "/" + treeDir + d.m.Branch
	}
	for _, b := range branches {
		if b.Name == d.m.Branch {
			continue
		}
		store, err := branchStore(d.root, b.Name)
		if err != nil {
			return err
		}
		versions, err := listVersions(ctx, store)
		if err != nil {
			return err
		}
		for _, v := range versions {
			m, err := readManifest(ctx, store, v, d.opts.maxManifestBytes())
			if err != nil {
				return err
			}
			for _, bp := range m.BasePaths {
				// A branch made before Options.URI was known still names
				// this root; when in doubt, its files are kept.
				if self == "" || normalizeURI(bp.Path) == self {
					s.addBased(m, bp.ID)
				}
			}
		}
	}
	return nil
}

// fileSet is a set of object paths below a dataset (or branch) root, and
// of index directories.
type fileSet struct {
	paths   map[string]bool
	indexes map[string]bool
	// rows holds the rows of the fragment each data file path is the
	// first file of.
	rows map[string]uint64
}

func newFileSet() *fileSet {
	return &fileSet{paths: map[string]bool{}, indexes: map[string]bool{}, rows: map[string]uint64{}}
}

// addManifest adds the files of m's own root that m refers to.
func (s *fileSet) addManifest(m *Manifest) {
	if m.TransactionFile != "" {
		s.paths["_transactions/"+m.TransactionFile] = true
	}
	s.addFiles(m, func(base *uint32) bool { return base == nil })
}

// addBased adds the files m refers to through base path id.
func (s *fileSet) addBased(m *Manifest, id uint32) {
	s.addFiles(m, func(base *uint32) bool { return base != nil && *base == id })
}

func (s *fileSet) addFiles(m *Manifest, under func(*uint32) bool) {
	for _, f := range m.Fragments {
		for i, df := range f.Files {
			if under(df.BaseID) {
				s.paths["data/"+df.Path] = true
				if i == 0 {
					s.rows["data/"+df.Path] = f.PhysicalRows
				}
			}
		}
		if f.Deletion != nil && under(f.Deletion.BaseID) {
			s.paths[deletionsDir+deletionName(f.ID, f.Deletion)] = true
		}
	}
	for _, ix := range m.Indexes {
		if under(ix.BaseID) {
			s.indexes["_indices/"+ix.UUID+"/"] = true
		}
	}
}

func (s *fileSet) has(p string) bool {
	if s.paths[p] {
		return true
	}
	if rest, ok := strings.CutPrefix(p, "_indices/"); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			return s.indexes["_indices/"+rest[:i+1]]
		}
	}
	return false
}
