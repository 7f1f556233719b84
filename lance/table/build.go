package table

import (
	"context"
	"maps"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/schema"
)

// buildManifest returns the manifest of the version t makes on top of
// base (nil, and create set, when t creates the dataset), stored in
// store: base's content
// changed as t says, numbered base.Version+1, stamped with the writer,
// the time and t itself. It returns an error wrapping ErrInvalid when t
// does not fit base (fragments it updates are missing, a merge leaves
// fragments out), and the errors of reading the version a restore names.
func buildManifest(ctx context.Context, store blob.Store, opts Options, base *Manifest, t *Transaction, noTxnFiles bool, create *newDataset) (*Manifest, error) {
	var m *Manifest
	var err error
	stable := create != nil && create.stableRowIDs
	if base != nil {
		stable = base.ReaderFeatures&FeatureStableRowIDs != 0
	}
	switch op := t.Operation.(type) {
	case *Overwrite:
		if base == nil && create == nil {
			return nil, invalidf("creating a dataset needs its settings")
		}
		m = overwriteManifest(base, op, create)
	case *Restore:
		if m, err = restoreManifest(ctx, store, opts, base, op); err != nil {
			return nil, err
		}
	default:
		if base == nil {
			return nil, invalidf("a %s needs an existing dataset", op.Name())
		}
		m = base.next()
		if err := apply(m, op); err != nil {
			return nil, err
		}
	}
	switch op := t.Operation.(type) {
	case *Append:
		if err := assignFragmentIDs(m, op.Fragments, stable); err != nil {
			return nil, err
		}
	case *Overwrite:
		if err := assignFragmentIDs(m, op.Fragments, stable); err != nil {
			return nil, err
		}
	case *Update:
		if err := assignFragmentIDs(m, op.New, stable); err != nil {
			return nil, err
		}
	case *Rewrite:
		for _, g := range op.Groups {
			first := len(m.Fragments)
			if err := assignFragmentIDs(m, g.New, false); err != nil {
				return nil, err
			}
			if stable {
				// Rows keep their ids, which is what indexes hold: an index
				// covering the old fragments covers the new ones.
				moveIndexCoverage(m, g.Old, m.Fragments[first:])
			}
		}
	}
	slices.SortFunc(m.Fragments, func(a, b *Fragment) int { return cmpUint(a.ID, b.ID) })
	for _, f := range m.Fragments {
		f.Files = slices.DeleteFunc(f.Files, func(df DataFile) bool {
			return !slices.ContainsFunc(df.Fields, func(id int32) bool { return id != FieldTombstone })
		})
		if f.ID >= m.NextFragmentID {
			m.NextFragmentID = f.ID + 1
		}
	}
	if err := setFeatures(m, stable, noTxnFiles); err != nil {
		return nil, err
	}
	m.WriterVersion = opts.writerVersion()
	m.Timestamp = opts.now().UTC()
	m.Transaction = t
	if !noTxnFiles {
		m.TransactionFile = transactionName(t)
	}
	return m, nil
}

// overwriteManifest returns the first manifest of a dataset (base nil) or
// the one replacing base's content: op's schema (its fragments are added
// by the caller), base's config with op's merged in, no indexes. Lance
// numbers an overwrite's fragments from 0 again; this package goes on
// from base's NextFragmentID, so that no fragment id of a dataset's
// history is ever reused.
func overwriteManifest(base *Manifest, op *Overwrite, create *newDataset) *Manifest {
	var m *Manifest
	if base == nil {
		m = &Manifest{Version: 1, DataFormat: create.format}
	} else {
		m = base.next()
		m.Fragments = nil
		m.Indexes = nil
	}
	m.Schema = op.Schema.Clone()
	if len(op.Config) > 0 {
		if m.Config == nil {
			m.Config = map[string]string{}
		}
		maps.Copy(m.Config, op.Config)
	}
	return m
}

// dataFormatOf returns the data format of fragments' files ("lance" and
// the version of the first file), or, for a dataset created without any,
// the version lance/file writes (2.0), so that its rows can be appended.
func dataFormatOf(fs []*Fragment) DataFormat {
	for _, f := range fs {
		for _, df := range f.Files {
			return DataFormat{FileFormat: "lance", Version: fileVersionName(df.MajorVersion, df.MinorVersion)}
		}
	}
	return DataFormat{FileFormat: "lance", Version: "2.0"}
}

// fileVersionName returns the data storage version name of a data file
// format version: 2.0 files carry 0.3 (or 2.0), later ones major.minor.
func fileVersionName(major, minor uint32) string {
	switch {
	case major == 0 && minor == 3, major == 2 && minor == 0:
		return "2.0"
	case major == 0:
		return "0.1"
	}
	return formatUint(uint64(major)) + "." + formatUint(uint64(minor))
}

// restoreManifest returns the manifest restoring version op.Version on top
// of base: the old version's schema, fragments, indexes and settings,
// numbered after base. NextFragmentID stays at least base's, so that ids
// used after the restored version are not handed out again.
func restoreManifest(ctx context.Context, store blob.Store, opts Options, base *Manifest, op *Restore) (*Manifest, error) {
	if base == nil {
		return nil, invalidf("a restore needs an existing dataset")
	}
	info, err := findVersion(ctx, store, op.Version)
	if err != nil {
		return nil, err
	}
	old, err := readManifest(ctx, store, info, opts.maxManifestBytes())
	if err != nil {
		return nil, err
	}
	if old.Branch != base.Branch {
		return nil, corruptf("version %d belongs to branch %q", op.Version, old.Branch)
	}
	m := old.next()
	m.Version = base.Version + 1
	m.NextFragmentID = max(m.NextFragmentID, base.NextFragmentID)
	m.NextRowID = max(m.NextRowID, base.NextRowID)
	return m, nil
}

// apply changes m (a copy of the base version) as op says, for the
// operations that keep building on the base's content.
func apply(m *Manifest, op Operation) error {
	switch op := op.(type) {
	case *Append:
		// Fragments are added with their ids, after this switch.
	case *Delete:
		if err := replaceFragments(m, op.Updated, op.Removed); err != nil {
			return err
		}
		retainIndexes(m)
	case *Update:
		// The new fragments are added with their ids, after this switch.
		if err := replaceFragments(m, op.Updated, op.Removed); err != nil {
			return err
		}
		retainIndexes(m)
	case *Merge:
		if len(op.Fragments) < len(m.Fragments) {
			return invalidf("a merge gives %d fragments for the %d of version %d", len(op.Fragments), len(m.Fragments), m.Version-1)
		}
		have := idSet(fragmentIDs(op.Fragments))
		for _, f := range m.Fragments {
			if !have[f.ID] {
				return invalidf("a merge leaves out fragment %d", f.ID)
			}
		}
		m.Fragments = cloneFragments(op.Fragments)
		m.Schema = op.Schema.Clone()
		retainIndexes(m)
	case *Project:
		m.Schema = op.Schema.Clone()
		kept := fieldIDs(m.Schema)
		for _, f := range m.Fragments {
			f.Files = slices.DeleteFunc(f.Files, func(df DataFile) bool {
				return !slices.ContainsFunc(df.Fields, func(id int32) bool { return kept[id] })
			})
		}
		retainIndexes(m)
	case *Rewrite:
		for _, g := range op.Groups {
			for _, old := range g.Old {
				i := slices.IndexFunc(m.Fragments, func(f *Fragment) bool { return f.ID == old.ID })
				if i < 0 {
					return invalidf("a rewrite replaces fragment %d, which version %d does not have", old.ID, m.Version-1)
				}
				m.Fragments = slices.Delete(m.Fragments, i, i+1)
			}
		}
	case *ReserveFragments:
		m.NextFragmentID += uint64(op.N)
	default:
		return invalidf("this library does not apply %s transactions", op.Name())
	}
	return nil
}

// replaceFragments gives fragments of m the deletion files of the updated
// ones of the same ids (a delete changes nothing else of a fragment, so
// data files a concurrent commit changed are kept) and removes those in
// removed. It returns an error wrapping ErrInvalid for an id m lacks.
func replaceFragments(m *Manifest, updated []*Fragment, removed []uint64) error {
	gone := idSet(removed)
	for _, id := range removed {
		if m.Fragment(id) == nil {
			return invalidf("fragment %d is removed, but version %d does not have it", id, m.Version-1)
		}
	}
	m.Fragments = slices.DeleteFunc(m.Fragments, func(f *Fragment) bool { return gone[f.ID] })
	for _, u := range updated {
		f := m.Fragment(u.ID)
		if f == nil {
			return invalidf("fragment %d is updated, but version %d does not have it", u.ID, m.Version-1)
		}
		f.Deletion = nil
		if u.Deletion != nil {
			d := *u.Deletion
			f.Deletion = &d
		}
	}
	return nil
}

// assignFragmentIDs gives each of fs the next fragment id of m, gives it
// stable row ids and row versions when the dataset keeps them, and adds
// it to m.
func assignFragmentIDs(m *Manifest, fs []*Fragment, stable bool) error {
	for _, f := range fs {
		c := f.Clone()
		c.ID = m.NextFragmentID
		m.NextFragmentID++
		if stable && c.RowIDs == nil {
			c.RowIDs = &Sequence{Inline: encodeRowIDRange(m.NextRowID, c.PhysicalRows)}
			m.NextRowID += c.PhysicalRows
			versions := encodeVersionRun(c.PhysicalRows, m.Version)
			c.LastUpdated = &Sequence{Inline: versions}
			c.Created = &Sequence{Inline: versions}
		}
		m.Fragments = append(m.Fragments, c)
	}
	return nil
}

// moveIndexCoverage makes every index covering all of old cover fresh
// instead.
func moveIndexCoverage(m *Manifest, old, fresh []*Fragment) {
	for _, ix := range m.Indexes {
		if ix.Fragments == nil || !slices.ContainsFunc(old, func(f *Fragment) bool { return ix.Fragments.Contains(uint32(f.ID)) }) {
			continue
		}
		if slices.ContainsFunc(old, func(f *Fragment) bool { return !ix.Fragments.Contains(uint32(f.ID)) }) {
			continue // compaction never groups covered and uncovered fragments
		}
		for _, f := range old {
			ix.Fragments.Remove(uint32(f.ID))
		}
		for _, f := range fresh {
			ix.Fragments.Add(uint32(f.ID))
		}
	}
}

// retainIndexes drops the indexes a change of schema or fragments left
// without purpose, as Lance does: those on fields the schema lost, and
// vector indexes none of whose fragments remain (an empty scalar index
// still says "indexed, no rows", so the oldest of a name is kept).
func retainIndexes(m *Manifest) {
	ids := fieldIDs(m.Schema)
	live := roaring.New()
	for _, f := range m.Fragments {
		live.Add(uint32(f.ID))
	}
	m.Indexes = slices.DeleteFunc(m.Indexes, func(ix *Index) bool {
		return !isSystemIndex(ix) && !allIn(ix.Fields, ids)
	})
	empty := func(ix *Index) bool { return ix.Fragments == nil || !ix.Fragments.Intersects(live) }
	byName := map[string][]*Index{}
	for _, ix := range m.Indexes {
		if !isSystemIndex(ix) {
			byName[ix.Name] = append(byName[ix.Name], ix)
		}
	}
	drop := map[*Index]bool{}
	for _, group := range byName {
		var nonEmpty []*Index
		for _, ix := range group {
			if !empty(ix) {
				nonEmpty = append(nonEmpty, ix)
			}
		}
		if len(nonEmpty) > 0 {
			for _, ix := range group {
				drop[ix] = empty(ix)
			}
			continue
		}
		oldest := slices.MinFunc(group, func(a, b *Index) int { return cmpUint(a.DatasetVersion, b.DatasetVersion) })
		for _, ix := range group {
			drop[ix] = ix != oldest || oldest.IsVector()
		}
	}
	m.Indexes = slices.DeleteFunc(m.Indexes, func(ix *Index) bool { return drop[ix] })
}

// isSystemIndex reports whether ix is one of Lance's bookkeeping indexes
// (fragment reuse, mem-WAL), which index no field.
func isSystemIndex(ix *Index) bool {
	return ix.Name == "__lance_frag_reuse" || ix.Name == "__lance_mem_wal"
}

func allIn(fields []int32, ids map[int32]bool) bool {
	for _, f := range fields {
		if !ids[f] {
			return false
		}
	}
	return true
}

func cloneFragments(fs []*Fragment) []*Fragment {
	out := make([]*Fragment, len(fs))
	for i, f := range fs {
		out[i] = f.Clone()
	}
	return out
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fieldIDs returns the ids of every field of s.
func fieldIDs(s *schema.Schema) map[int32]bool {
	ids := map[int32]bool{}
	for f := range s.All() {
		ids[f.ID] = true
	}
	return ids
}
