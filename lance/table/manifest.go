package table

import (
	"maps"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancens/lancens/lance/schema"
)

// Manifest is one version of a dataset: its schema, its fragments, its
// indexes and the facts Lance keeps beside them. A Manifest read from
// storage is not changed by this package; operations build new ones.
type Manifest struct {
	// Version numbers the dataset's versions from 1.
	Version uint64
	// Branch is the branch the version belongs to, "" for main.
	Branch string
	// Timestamp is when the version was committed.
	Timestamp time.Time
	// Schema holds every field with its id; fields are never renumbered.
	Schema *schema.Schema
	// Fragments are the dataset's rows, in order of fragment id.
	Fragments []*Fragment
	// Indexes are the index section: every index (and delta of one) the
	// version has.
	Indexes []*Index
	// NextFragmentID is the id the next new fragment gets: one more than
	// the highest id ever used, so never reused after a fragment goes.
	NextFragmentID uint64
	// NextRowID is the first stable row id not yet assigned (datasets with
	// FeatureStableRowIDs only).
	NextRowID uint64
	// ReaderFeatures and WriterFeatures are the features a reader,
	// respectively a writer, must implement to use the version.
	ReaderFeatures, WriterFeatures Features
	// WriterVersion names the library that wrote the manifest.
	WriterVersion WriterVersion
	// DataFormat is the format of every data file: "lance" and "2.0",
	// "2.1" or "2.2".
	DataFormat DataFormat
	// Config holds library settings ("lance.*" keys are Lance's).
	Config map[string]string
	// TableMetadata holds the user's metadata about the table.
	TableMetadata map[string]string
	// BasePaths are other roots files of the version can live under
	// (branches and shallow clones keep their parent's files there).
	BasePaths []BasePath
	// TransactionFile names the transaction file of the commit that made
	// the version, below _transactions/ ("" when none was written).
	TransactionFile string
	// Transaction is the transaction stored inline in the manifest, or nil.
	Transaction *Transaction
	// Tag is the legacy per-version tag (tags live in _refs/tags now).
	Tag string

	// versionAuxData is carried over unread.
	versionAuxData uint64
}

// WriterVersion names a library and its version ("lance", "12.0.0").
type WriterVersion struct {
	Library       string
	Version       string
	Prerelease    string
	BuildMetadata string
}

// DataFormat names the format and version of a dataset's data files.
type DataFormat struct {
	// FileFormat is "lance".
	FileFormat string
	// Version is the data file version: "2.0", "2.1", "2.2" ("0.1" or
	// "legacy" for old datasets).
	Version string
}

// BasePath is a root that files of a dataset can be stored under, other
// than the dataset's own: the dataset a branch or shallow clone was made
// from, or a directory data files were imported from.
type BasePath struct {
	ID   uint32
	Name string
	// IsDatasetRoot says files are in the usual subdirectories of Path
	// (data/, _deletions/, _indices/); otherwise directly in it.
	IsDatasetRoot bool
	// Path is absolute: a URI ("s3://bucket/t.lance") or a local path.
	Path string
}

// Fragment is a run of rows of a dataset, stored as one or more data files
// that hold different fields of the same rows, and perhaps a deletion file
// marking some of them deleted.
type Fragment struct {
	ID    uint64
	Files []DataFile
	// Deletion is the fragment's deletion file, or nil when no row of it
	// is deleted.
	Deletion *DeletionFile
	// PhysicalRows counts the rows of the data files, deleted ones too.
	PhysicalRows uint64
	// RowIDs, LastUpdated and Created are the stable row ids of the rows
	// and the versions each was last updated and created at (datasets
	// with FeatureStableRowIDs only); nil when absent.
	RowIDs, LastUpdated, Created *Sequence

	// unknown holds fields of newer writers, carried over as read.
	unknown []byte
}

// Rows returns the number of rows of f that are not deleted.
func (f *Fragment) Rows() uint64 {
	if f.Deletion == nil {
		return f.PhysicalRows
	}
	return f.PhysicalRows - min(f.Deletion.NumDeleted, f.PhysicalRows)
}

// Clone returns a deep copy of f.
func (f *Fragment) Clone() *Fragment {
	c := *f
	c.Files = slices.Clone(f.Files)
	for i := range c.Files {
		c.Files[i].Fields = slices.Clone(f.Files[i].Fields)
		c.Files[i].ColumnIndices = slices.Clone(f.Files[i].ColumnIndices)
	}
	if f.Deletion != nil {
		d := *f.Deletion
		c.Deletion = &d
	}
	return &c
}

// Sequence is a serialized sequence of u64 values per row of a fragment
// (row ids, or row versions), stored inline in the manifest or in a file.
type Sequence struct {
	// Inline holds the serialized sequence when it is in the manifest.
	Inline []byte
	// External locates it otherwise.
	External *ExternalFile
}

// ExternalFile locates bytes stored in a file of the dataset.
type ExternalFile struct {
	Path   string
	Offset uint64
	Size   uint64
}

// DataFile is one Lance data file of a fragment.
type DataFile struct {
	// Path is relative to the data directory (data/ below the dataset
	// root, or below the base path BaseID names).
	Path string
	// Fields are the ids of the schema fields the file holds; FieldTombstone
	// marks one whose values moved to another file.
	Fields []int32
	// ColumnIndices gives, per field, the file column its values start
	// at, or -1 when the field has none of its own.
	ColumnIndices []int32
	// MajorVersion and MinorVersion are the file's format version.
	MajorVersion, MinorVersion uint32
	// Size is the file's size in bytes, 0 when unknown.
	Size uint64
	// BaseID names the base path the file is under; nil for the dataset's
	// own root.
	BaseID *uint32

	// unknown holds fields of newer writers, carried over as read.
	unknown []byte
}

// FieldTombstone in DataFile.Fields marks a field the file no longer
// provides.
const FieldTombstone = -2

// DeletionFile describes the deletion file of a fragment, at
// _deletions/<fragment id>-<ReadVersion>-<ID>.<arrow|bin>.
type DeletionFile struct {
	Kind DeletionKind
	// ReadVersion is the version the deletion was computed against.
	ReadVersion uint64
	// ID tells apart files of concurrent writers.
	ID uint64
	// NumDeleted counts the rows the file deletes.
	NumDeleted uint64
	// BaseID names the base path the file is under; nil for the dataset's
	// own root.
	BaseID *uint32
}

// Index describes an index of a version, or one delta of it (deltas share
// the name and cover different fragments).
type Index struct {
	// UUID names the index's directory, _indices/<UUID>/ (hyphenated).
	UUID string
	Name string
	// Fields are the ids of the indexed fields.
	Fields []int32
	// DatasetVersion is the version the index was built on.
	DatasetVersion uint64
	// Fragments are the ids of the fragments whose rows the index holds
	// (some may have been removed since); nil when the index records none.
	Fragments *roaring.Bitmap
	// Type is the index details' type name with its package, as Lance
	// names it ("lance.index.pb.VectorIndexDetails",
	// "lance.table.BTreeIndexDetails", …), "" when it has no details.
	Type string
	// IndexVersion is the index format's version.
	IndexVersion int32
	// CreatedAt is when the index was built; zero when unrecorded.
	CreatedAt time.Time
	// BaseID names the base path the index is under; nil for the
	// dataset's own root.
	BaseID *uint32

	// details is the index's details message, carried over unread, as
	// are fields of newer writers (Lance 12 lists the index's files).
	details   []byte
	typeURL   string
	hasIdxVer bool
	unknown   []byte
}

// IsVector reports whether the index is a vector index.
func (ix *Index) IsVector() bool {
	return ix.Type == "lance.index.pb.VectorIndexDetails" || ix.Type == "lance.table.VectorIndexDetails"
}

// clone returns a deep copy of ix.
func (ix *Index) clone() *Index {
	c := *ix
	c.Fields = slices.Clone(ix.Fields)
	if ix.Fragments != nil {
		c.Fragments = ix.Fragments.Clone()
	}
	return &c
}

// Rows returns the number of rows of the version that are not deleted.
func (m *Manifest) Rows() uint64 {
	var n uint64
	for _, f := range m.Fragments {
		n += f.Rows()
	}
	return n
}

// Fragment returns the fragment with the given id, or nil.
func (m *Manifest) Fragment(id uint64) *Fragment {
	i, ok := slices.BinarySearchFunc(m.Fragments, id, func(f *Fragment, id uint64) int {
		switch {
		case f.ID < id:
			return -1
		case f.ID > id:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return m.Fragments[i]
}

// next returns the start of the manifest of the version after m: a copy
// sharing nothing mutable with m, with the version number, timestamp,
// transaction and legacy tag left for the commit to fill in.
func (m *Manifest) next() *Manifest {
	c := *m
	c.Version = m.Version + 1
	c.Timestamp = time.Time{}
	c.Transaction = nil
	c.TransactionFile = ""
	c.Tag = ""
	c.versionAuxData = 0
	c.Schema = m.Schema.Clone()
	c.Fragments = make([]*Fragment, len(m.Fragments))
	for i, f := range m.Fragments {
		c.Fragments[i] = f.Clone()
	}
	c.Indexes = make([]*Index, len(m.Indexes))
	for i, ix := range m.Indexes {
		c.Indexes[i] = ix.clone()
	}
	c.Config = maps.Clone(m.Config)
	c.TableMetadata = maps.Clone(m.TableMetadata)
	c.BasePaths = slices.Clone(m.BasePaths)
	return &c
}

// IndexColumns returns the paths of the fields ix indexes ("vec",
// "meta.tag"). It returns an error wrapping ErrCorrupt when one is not in
// the schema.
func (m *Manifest) IndexColumns(ix *Index) ([]string, error) {
	out := make([]string, len(ix.Fields))
	for i, id := range ix.Fields {
		p, err := m.Schema.Path(id)
		if err != nil {
			return nil, corruptf("index %s names field %d, which the schema of version %d lacks", ix.Name, id, m.Version)
		}
		out[i] = p
	}
	return out, nil
}

// Unindexed returns the ids of m's fragments that no delta of the index
// called name covers: rows a search must scan without the index (those
// appended since it was built, or rewritten by a compaction). It returns
// false when m has no index of that name.
func (m *Manifest) Unindexed(name string) ([]uint64, bool) {
	covered := roaring.New()
	found := false
	for _, ix := range m.Indexes {
		if ix.Name == name {
			found = true
			if ix.Fragments != nil {
				covered.Or(ix.Fragments)
			}
		}
	}
	if !found {
		return nil, false
	}
	var out []uint64
	for _, f := range m.Fragments {
		if !covered.Contains(uint32(f.ID)) {
			out = append(out, f.ID)
		}
	}
	return out, true
}
