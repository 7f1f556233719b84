package table

import (
	"context"
	"errors"
	"iter"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/lance/file"
)

// CompactOptions say which fragments Compact rewrites and how.
type CompactOptions struct {
	// TargetRows is the number of rows a fragment should have: smaller
	// ones are merged with their neighbours up to it; 0 is
	// DefaultMaxRowsPerFile.
	TargetRows uint64
	// DeletedFraction rewrites a fragment whose deleted rows exceed this
	// fraction of it, to drop them; 0 is Lance's 0.1, and a negative value
	// leaves deletions alone.
	DeletedFraction float64
	// BatchRows is the number of rows read at a time; 0 is 8192.
	BatchRows int
	// File are the data file writer's options.
	File file.WriteOptions
	// Read are the data file reader's options.
	Read *file.ReadOptions
}

// CompactStats counts what a compaction did.
type CompactStats struct {
	FragmentsRemoved, FragmentsAdded int
	FilesRemoved, FilesAdded         int
}

// Compact rewrites small fragments, and fragments with many deleted rows,
// into fewer fragments holding only their live rows and only the fields
// of the schema, and commits the result as a Rewrite (Lance's compaction):
// the rows and their order are unchanged. Neighbouring fragments are
// merged only when the same indexes cover them; indexes keep the
// fragments they were built on (Lance masks rows of fragments that are
// gone, and searches the new ones without the index until it is
// rebuilt), except on datasets with stable row ids, whose rows keep their
// ids, and whose indexes so cover the new fragments. It returns d itself
// (and zero stats) when there is nothing to do, ErrUnsupported when the
// dataset's data format is not one lance/file writes, the errors of
// reading and writing data files, and those of committing (a conflict
// when the fragments changed meanwhile).
func (d *Dataset) Compact(ctx context.Context, opts CompactOptions) (*Dataset, CompactStats, error) {
	var stats CompactStats
	if opts.TargetRows == 0 {
		opts.TargetRows = DefaultMaxRowsPerFile
	}
	if opts.DeletedFraction == 0 {
		opts.DeletedFraction = 0.1
	}
	groups := planCompaction(d.m, opts)
	if len(groups) == 0 {
		return d, stats, nil
	}
	if err := d.checkWritesFormat(opts.File); err != nil {
		return nil, stats, err
	}
	stable := d.m.ReaderFeatures&FeatureStableRowIDs != 0
	op := &Rewrite{}
	for _, old := range groups {
		fresh, err := d.rewriteFragments(ctx, old, opts, stable)
		if err != nil {
			return nil, stats, err
		}
		op.Groups = append(op.Groups, RewriteGroup{Old: old, New: fresh})
		stats.FragmentsRemoved += len(old)
		stats.FragmentsAdded += len(fresh)
		for _, f := range old {
			stats.FilesRemoved += len(f.Files)
		}
		stats.FilesAdded += len(fresh)
	}
	next, err := d.commit(ctx, &Transaction{Operation: op})
	return next, stats, err
}

// planCompaction returns the groups of fragments to rewrite together:
// runs of neighbouring candidates (small, or with many deletions) covered
// by the same indexes, cut when they reach the target size, and kept when
// rewriting them gains something (two or more fragments, or deletions to
// drop).
func planCompaction(m *Manifest, opts CompactOptions) [][]*Fragment {
	coverage := func(f *Fragment) string {
		var key []byte
		for _, ix := range m.Indexes {
			if ix.Fragments != nil && ix.Fragments.Contains(uint32(f.ID)) {
				key = append(key, ix.UUID...)
			}
		}
		return string(key)
	}
	manyDeleted := func(f *Fragment) bool {
		return opts.DeletedFraction >= 0 && f.Deletion != nil && f.PhysicalRows > 0 &&
			float64(f.Deletion.NumDeleted) > opts.DeletedFraction*float64(f.PhysicalRows)
	}
	var groups [][]*Fragment
	var cur []*Fragment
	var rows uint64
	var key string
	flush := func() {
		if len(cur) > 1 || len(cur) == 1 && manyDeleted(cur[0]) {
			groups = append(groups, cur)
		}
		cur, rows = nil, 0
	}
	for _, f := range m.Fragments {
		if f.Rows() >= opts.TargetRows && !manyDeleted(f) {
			flush()
			continue
		}
		if k := coverage(f); len(cur) > 0 && (k != key || rows+f.Rows() > opts.TargetRows) {
			flush()
			key = k
		} else if len(cur) == 0 {
			key = k
		}
		cur = append(cur, f)
		rows += f.Rows()
	}
	flush()
	return groups
}

// rewriteFragments writes the live rows of old, in order, into new
// fragments of at most opts.TargetRows rows; with stable row ids, each new
// fragment carries its rows' ids and versions.
func (d *Dataset) rewriteFragments(ctx context.Context, old []*Fragment, opts CompactOptions, stable bool) ([]*Fragment, error) {
	var ids, created, updated []uint64
	if stable {
		for _, f := range old {
			seqs, err := d.liveSequences(ctx, f)
			if err != nil {
				return nil, err
			}
			ids = append(ids, seqs[0]...)
			updated = append(updated, seqs[1]...)
			created = append(created, seqs[2]...)
		}
	}
	var readErr error
	batches := func(yield func(arrow.RecordBatch, error) bool) {
		for _, f := range old {
			fr, err := d.OpenFragment(ctx, f, nil, opts.Read)
			if err != nil {
				readErr = err
				yield(nil, err)
				return
			}
			for b, err := range fr.Scan(ctx, opts.BatchRows) {
				if err != nil {
					readErr = err
					yield(nil, err)
					return
				}
				ok := yield(b.Rows, nil)
				b.Rows.Release()
				if !ok {
					return
				}
			}
		}
	}
	fresh, err := WriteFragments(ctx, d.store, d.m.Schema, iter.Seq2[arrow.RecordBatch, error](batches), WriteOptions{MaxRowsPerFile: opts.TargetRows, File: opts.File})
	if err != nil {
		return nil, errors.Join(err, readErr)
	}
	if stable {
		at := uint64(0)
		for _, f := range fresh {
			n := f.PhysicalRows
			if at+n > uint64(len(ids)) {
				return nil, corruptf("compaction wrote more rows than the fragments' row ids")
			}
			f.RowIDs = &Sequence{Inline: encodeU64Sequence(ids[at : at+n])}
			f.LastUpdated = &Sequence{Inline: encodeVersionSequence(updated[at : at+n])}
			f.Created = &Sequence{Inline: encodeVersionSequence(created[at : at+n])}
			at += n
		}
	}
	return fresh, nil
}

// liveSequences returns the row ids, last-updated versions and creation
// versions of f's live rows, in order. It returns an error wrapping
// ErrCorrupt for sequences that do not match the fragment, and
// ErrUnsupported for sequences stored in files.
func (d *Dataset) liveSequences(ctx context.Context, f *Fragment) ([3][]uint64, error) {
	var out [3][]uint64
	deleted, err := d.Deletions(ctx, f)
	if err != nil {
		return out, err
	}
	for i, seq := range []*Sequence{f.RowIDs, f.LastUpdated, f.Created} {
		var all []uint64
		switch {
		case seq == nil && i > 0:
			// Datasets older than row versions lack them: version 1.
			all = slices.Repeat([]uint64{1}, int(f.PhysicalRows))
		case seq == nil:
			return out, corruptf("fragment %d of a dataset with stable row ids has none", f.ID)
		case seq.External != nil:
			return out, unsupportedf("fragment %d keeps its row sequences in a file", f.ID)
		case i == 0:
			all, err = decodeRowIDs(seq.Inline, f.PhysicalRows)
		default:
			all, err = decodeVersions(seq.Inline, f.PhysicalRows)
		}
		if err != nil {
			return out, err
		}
		for o, v := range all {
			if !deleted.Contains(uint32(o)) {
				out[i] = append(out[i], v)
			}
		}
	}
	return out, nil
}

// checkWritesFormat returns an error wrapping ErrUnsupported when data
// files written with opts would not be of the dataset's data format: a
// dataset's files all share one format version.
func (d *Dataset) checkWritesFormat(opts file.WriteOptions) error {
	v := opts.Version
	if v == (file.Version{}) {
		v = file.V2_0
	}
	if name := fileVersionName(uint32(v.Major), uint32(v.Minor)); name != d.m.DataFormat.Version {
		return unsupportedf("the dataset's data files are format %s; this writes %s", d.m.DataFormat.Version, name)
	}
	return nil
}
