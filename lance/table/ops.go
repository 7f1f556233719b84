package table

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/schema"
)

// The operations below are the building blocks of writes: each commits
// one version (see Dataset.commit for what happens when another writer
// commits first) and returns its Dataset. Data files are written before
// an operation is called (with lance/file), and their fragments passed
// in; nothing refers to them until the commit succeeds, so a failed
// operation leaves at most unreferenced files, which Cleanup removes.

// CreateOptions configure a new dataset.
type CreateOptions struct {
	Options
	// Naming is the manifest naming scheme; the zero value is NamingV2.
	Naming Naming
	// StableRowIDs gives rows ids that survive compaction and updates
	// (FeatureStableRowIDs); it cannot be turned on later.
	StableRowIDs bool
	// DataFormat is the data file format the dataset declares; when
	// empty it is that of the fragments' files, or, for a dataset created
	// empty, "lance" "2.0" (what lance/file writes).
	DataFormat DataFormat
	// Config is the dataset's initial config.
	Config map[string]string
}

// Create creates a dataset in root (which must hold none) with schema sch
// and the given fragments (their ids are assigned), as version 1. Fields
// of sch without an id (ID < 0) are given ones. It returns an error
// wrapping ErrExists when root already holds a dataset, ErrInvalid when
// sch is not a valid schema or a fragment holds fields sch lacks, and the
// errors of storing files and of the Committer.
func Create(ctx context.Context, root blob.Store, sch *schema.Schema, fragments []*Fragment, opts CreateOptions) (*Dataset, error) {
	sch = sch.Clone()
	if _, err := sch.AssignIDs(0); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := sch.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := checkFragments(sch, fragments, sch.MaxID()); err != nil {
		return nil, err
	}
	if _, err := latestVersion(ctx, root); err == nil {
		return nil, fmt.Errorf("%w: a dataset", ErrExists)
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	t := &Transaction{UUID: newUUID(), Operation: &Overwrite{Fragments: fragments, Schema: sch, Config: opts.Config}}
	format := opts.DataFormat
	if format.FileFormat == "" {
		format = dataFormatOf(fragments)
	}
	return commitTransaction(ctx, root, root, opts.Options, nil, opts.Naming, t, &newDataset{stableRowIDs: opts.StableRowIDs, format: format})
}

// Append adds fragments (whose ids are assigned) to the dataset. It
// returns an error wrapping ErrInvalid when a fragment is empty or holds
// fields the schema lacks, and the errors of committing.
func (d *Dataset) Append(ctx context.Context, fragments []*Fragment) (*Dataset, error) {
	if len(fragments) == 0 {
		return nil, invalidf("nothing to append")
	}
	if err := checkFragments(d.m.Schema, fragments, maxFieldID(d.m)); err != nil {
		return nil, err
	}
	if err := checkFileFormat(d.m, fragments); err != nil {
		return nil, err
	}
	return d.commit(ctx, &Transaction{Operation: &Append{Fragments: fragments}})
}

// Overwrite replaces the dataset's schema and rows (keeping its history,
// config, tags and branches). Fields of sch without an id are given new
// ones; fields keep their ids otherwise. It returns the errors of Create
// but ErrExists.
func (d *Dataset) Overwrite(ctx context.Context, sch *schema.Schema, fragments []*Fragment, config map[string]string) (*Dataset, error) {
	sch = sch.Clone()
	if _, err := sch.AssignIDs(maxFieldID(d.m) + 1); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := sch.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := checkFragments(sch, fragments, sch.MaxID()); err != nil {
		return nil, err
	}
	return d.commit(ctx, &Transaction{Operation: &Overwrite{Fragments: fragments, Schema: sch, Config: config}})
}

// Delete deletes rows by offset: rows maps fragment ids to the offsets of
// rows to delete within them (already deleted ones may be repeated).
// Each touched fragment gets a new deletion file holding its old and new
// deletions; a fragment left with no row is removed. predicate is
// recorded as the delete's filter (Lance uses it to describe the
// commit). It returns an error wrapping ErrInvalid for a fragment the
// version lacks or an offset beyond a fragment's rows, and the errors of
// reading the old deletion files and of committing.
func (d *Dataset) Delete(ctx context.Context, rows map[uint64]*roaring.Bitmap, predicate string) (*Dataset, error) {
	updated, removed, err := d.deleteRows(ctx, rows)
	if err != nil {
		return nil, err
	}
	if len(updated) == 0 && len(removed) == 0 {
		return d, nil
	}
	return d.commit(ctx, &Transaction{Operation: &Delete{Updated: updated, Removed: removed, Predicate: predicate}})
}

// Update deletes rows by offset (as Delete does) and adds fragments
// holding their new values, and any new rows, in one version: Lance's
// Update in its rewrite-rows mode, which updates and merge-inserts are
// made of. In a dataset with stable row ids, new fragments keep the row
// ids they carry (a caller that moves rows gives them theirs) and get new
// ones otherwise. It returns the errors of Delete and Append.
func (d *Dataset) Update(ctx context.Context, rows map[uint64]*roaring.Bitmap, fragments []*Fragment) (*Dataset, error) {
	if err := checkFragments(d.m.Schema, fragments, maxFieldID(d.m)); err != nil {
		return nil, err
	}
	if err := checkFileFormat(d.m, fragments); err != nil {
		return nil, err
	}
	updated, removed, err := d.deleteRows(ctx, rows)
	if err != nil {
		return nil, err
	}
	if len(updated) == 0 && len(removed) == 0 && len(fragments) == 0 {
		return d, nil
	}
	return d.commit(ctx, &Transaction{Operation: &Update{Updated: updated, Removed: removed, New: fragments}})
}

// deleteRows stores the deletion files of deleting rows (fragment id to
// offsets) and returns the fragments they update and those left empty. It
// returns an error wrapping ErrInvalid for a fragment the version lacks or
// an offset beyond a fragment's rows, and the errors of reading the old
// deletion files and storing the new ones.
func (d *Dataset) deleteRows(ctx context.Context, rows map[uint64]*roaring.Bitmap) ([]*Fragment, []uint64, error) {
	var updated []*Fragment
	var removed []uint64
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		add := rows[id]
		f := d.m.Fragment(id)
		if f == nil {
			return nil, nil, invalidf("version %d has no fragment %d", d.m.Version, id)
		}
		if add.IsEmpty() {
			continue
		}
		if uint64(add.Maximum()) >= f.PhysicalRows {
			return nil, nil, invalidf("fragment %d has %d rows; row %d cannot be deleted", id, f.PhysicalRows, add.Maximum())
		}
		deleted, err := d.Deletions(ctx, f)
		if err != nil {
			return nil, nil, err
		}
		before := deleted.GetCardinality()
		deleted.Or(add)
		n := deleted.GetCardinality()
		switch {
		case n == before:
			continue
		case n == f.PhysicalRows:
			removed = append(removed, id)
			continue
		}
		kind, data, err := EncodeDeletions(deleted)
		if err != nil {
			return nil, nil, err
		}
		u := f.Clone()
		u.Deletion = &DeletionFile{Kind: kind, ReadVersion: d.m.Version, ID: randomUint64(), NumDeleted: n}
		if err := blob.Put(ctx, d.store, deletionsDir+deletionName(id, u.Deletion), data); err != nil {
			return nil, nil, fmt.Errorf("storing a deletion file: %w", err)
		}
		updated = append(updated, u)
	}
	return updated, removed, nil
}

// ColumnWriter writes, for one fragment, a data file holding the values
// of the new fields (whose ids are assigned) for each of its physical
// rows, deleted ones included, and returns it.
type ColumnWriter func(ctx context.Context, f *Fragment, fields []*schema.Field) (DataFile, error)

// AddColumns adds top-level fields to the schema (with new ids) and gives
// every fragment a new data file holding them, written by write. It
// returns an error wrapping ErrInvalid when a field's name is taken or
// the schema would not be valid, or a written file holds other fields,
// and the errors of write and of committing.
func (d *Dataset) AddColumns(ctx context.Context, fields []*schema.Field, write ColumnWriter) (*Dataset, error) {
	sch := d.m.Schema.Clone()
	added := make([]*schema.Field, len(fields))
	for i, f := range fields {
		added[i] = f.Clone()
		clearIDs(added[i])
	}
	sch.Fields = append(sch.Fields, added...)
	if _, err := sch.AssignIDs(maxFieldID(d.m) + 1); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := sch.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	newIDs := map[int32]bool{}
	for _, f := range added {
		for g := range (&schema.Schema{Fields: []*schema.Field{f}}).All() {
			newIDs[g.ID] = true
		}
	}
	frags := make([]*Fragment, len(d.m.Fragments))
	for i, f := range d.m.Fragments {
		df, err := write(ctx, f, added)
		if err != nil {
			return nil, err
		}
		for _, id := range df.Fields {
			if !newIDs[id] {
				return nil, invalidf("the data file written for fragment %d holds field %d, which is not a new one", f.ID, id)
			}
		}
		c := f.Clone()
		c.Files = append(c.Files, df)
		frags[i] = c
		if err := checkFileFormat(d.m, []*Fragment{{Files: []DataFile{df}}}); err != nil {
			return nil, err
		}
	}
	return d.commit(ctx, &Transaction{Operation: &Merge{Fragments: frags, Schema: sch}})
}

// DropColumns removes the fields at the given paths ("a", "a.b") and their
// children from the schema. Data files keep their values (a file left
// with no field of the schema is dropped from its fragment) until
// compaction rewrites them; the ids are never reused. It returns an error
// wrapping ErrInvalid for a missing field or when nothing would be left,
// and the errors of committing.
func (d *Dataset) DropColumns(ctx context.Context, paths ...string) (*Dataset, error) {
	sch := d.m.Schema.Clone()
	for _, p := range paths {
		names, err := schema.ParsePath(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		if !removeField(&sch.Fields, names) {
			return nil, invalidf("no field %q", p)
		}
	}
	if len(sch.Fields) == 0 {
		return nil, invalidf("a dataset cannot drop all of its columns")
	}
	return d.commit(ctx, &Transaction{Operation: &Project{Schema: sch}})
}

// RenameColumn renames the field at path (its last name) to name. It
// returns an error wrapping ErrInvalid for a missing field or a name taken
// by a sibling, and the errors of committing.
func (d *Dataset) RenameColumn(ctx context.Context, path, name string) (*Dataset, error) {
	sch := d.m.Schema.Clone()
	f, err := sch.Field(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	f.Name = name
	if err := sch.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return d.commit(ctx, &Transaction{Operation: &Project{Schema: sch}})
}

// Restore makes the content of version v (of the same branch) the newest
// version. It returns an error wrapping ErrNotFound when v does not exist,
// and the errors of committing.
func (d *Dataset) Restore(ctx context.Context, v uint64) (*Dataset, error) {
	if _, err := findVersion(ctx, d.store, v); err != nil {
		return nil, err
	}
	return d.commit(ctx, &Transaction{Operation: &Restore{Version: v}})
}

// newDataset holds what only a dataset's first manifest takes from
// CreateOptions.
type newDataset struct {
	stableRowIDs bool
	format       DataFormat
}

// checkFragments returns an error wrapping ErrInvalid when a fragment has
// no rows or data file, or a data file holds field ids sch lacks (ids up
// to maxID may be those of dropped fields, which old files still hold).
func checkFragments(sch *schema.Schema, fs []*Fragment, maxID int32) error {
	ids := fieldIDs(sch)
	for i, f := range fs {
		if f.PhysicalRows == 0 || len(f.Files) == 0 {
			return invalidf("fragment %d has no rows or no data file", i)
		}
		for _, df := range f.Files {
			if df.Path == "" {
				return invalidf("fragment %d has a data file without a path", i)
			}
			if len(df.ColumnIndices) != 0 && len(df.ColumnIndices) != len(df.Fields) {
				return invalidf("data file %s has %d fields and %d column indices", df.Path, len(df.Fields), len(df.ColumnIndices))
			}
			for _, id := range df.Fields {
				if id != FieldTombstone && !ids[id] && id > maxID {
					return invalidf("data file %s holds field %d, which the schema does not have", df.Path, id)
				}
			}
		}
	}
	return nil
}

// checkFileFormat returns an error wrapping ErrUnsupported when a data
// file of fs is not of m's data format: all files of a dataset share one
// format version, which its manifest declares.
func checkFileFormat(m *Manifest, fs []*Fragment) error {
	for _, f := range fs {
		for _, df := range f.Files {
			if v := fileVersionName(df.MajorVersion, df.MinorVersion); v != m.DataFormat.Version {
				return unsupportedf("data file %s is format %s; the dataset's files are %s", df.Path, v, m.DataFormat.Version)
			}
		}
	}
	return nil
}

// maxFieldID returns the largest field id the version's schema or any of
// its data files uses: new fields get ids above it, so that a data file
// still holding a dropped field's values never supplies a new field.
// MaxFieldID returns the largest field id the version uses, in its schema
// or in its data files (fields dropped from the schema keep their values
// in the files until compaction): new fields take ids above it.
func (m *Manifest) MaxFieldID() int32 { return maxFieldID(m) }

func maxFieldID(m *Manifest) int32 {
	id := m.Schema.MaxID()
	for _, f := range m.Fragments {
		for _, df := range f.Files {
			for _, fid := range df.Fields {
				id = max(id, fid)
			}
		}
	}
	return id
}

// clearIDs marks f and its children as having no id yet.
func clearIDs(f *schema.Field) {
	f.ID = -1
	for _, c := range f.Children {
		clearIDs(c)
	}
}

// removeField removes the field at path names from fields, reporting
// whether it was there.
func removeField(fields *[]*schema.Field, names []string) bool {
	for i, f := range *fields {
		if f.Name != names[0] {
			continue
		}
		if len(names) == 1 {
			*fields = slices.Delete(*fields, i, i+1)
			return true
		}
		return removeField(&f.Children, names[1:])
	}
	return false
}

func randomUint64() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}
