package store

import (
	"context"
	"time"
)

// DatasetIndex is the catalog's record of an index of a table whose rows
// are a Lance dataset (the Lance engine's tables): its files live under
// the table's location, beside the data, and this record says what they
// are. The catalog keeps the record and arbitrates between the processes
// that change it; what the index is made of is the engine's, kept here as
// JSON text the catalog does not read (Definition, Build).
type DatasetIndex struct {
	UUID string
	Name string
	// Type is a canonical index type (see NormalizeIndexType).
	Type string
	// Status is IndexBuilding while a build is queued or running (a
	// record with a Build keeps serving it meanwhile), IndexSucceeded
	// once built, IndexFailed when the last build failed (Error says
	// why).
	Status    string
	Error     string
	CreatedAt time.Time
	// BuiltVersion is the version of main the first build read: as in
	// Lance, the index exists from that version on. Nil until built.
	BuiltVersion *int64
	// Definition is what the index was asked for (column, parameters).
	Definition string
	// Build is what the last build made (the fragments it covers, its
	// files); "" until built.
	Build string
}

// DatasetIndexes keeps the records of the indexes of tables stored as Lance
// datasets, for every process serving them (the catalog, not the
// dataset's manifest, is their home: Lance clients rewrite manifests
// without knowing lancens's indexes).
type DatasetIndexes interface {
	// CreateDatasetIndex records index ix of table id, in the transaction
	// that records the operation: when ix.Status is IndexBuilding, a
	// queued JobBuildIndex (payload BuildIndex) that builds it, otherwise
	// a succeeded CreateTableIndex; props are added to the transaction's
	// properties. An index of the same name is replaced when replace is
	// set or its last build failed (and returned, for its files to be
	// removed). It returns the transaction id. Returns TableNotFound (4),
	// TableIndexAlreadyExists (7).
	CreateDatasetIndex(ctx context.Context, id []string, ix DatasetIndex, replace bool, props map[string]string) (txID string, replaced *DatasetIndex, err error)

	// ListDatasetIndexes returns the records of table id's indexes, sorted
	// by name. Returns TableNotFound (4).
	ListDatasetIndexes(ctx context.Context, id []string) ([]DatasetIndex, error)

	// FindDatasetIndex returns the record of index uuid and the identifier
	// of its table. Returns TableIndexNotFound (6) when no index has that
	// uuid (it was dropped or replaced).
	FindDatasetIndex(ctx context.Context, uuid string) ([]string, *DatasetIndex, error)

	// FinishDatasetIndex records a finished build of index uuid: status
	// IndexSucceeded, build, and version as BuiltVersion unless the index
	// was built before. Returns TableIndexNotFound (6) when no index has
	// that uuid.
	FinishDatasetIndex(ctx context.Context, uuid string, version int64, build string) error

	// RebuildDatasetIndex marks index uuid of table id IndexBuilding (its
	// last build keeps serving) and queues a JobBuildIndex for it; props
	// are added to the transaction's properties. It returns the
	// transaction id. Returns TableNotFound (4), TableIndexNotFound (6).
	RebuildDatasetIndex(ctx context.Context, id []string, uuid string, props map[string]string) (string, error)

	// DropDatasetIndex deletes the record of index name of table id,
	// records the drop and returns the transaction id and the record (for
	// its files to be removed). Returns TableNotFound (4),
	// TableIndexNotFound (6).
	DropDatasetIndex(ctx context.Context, id []string, name string) (string, *DatasetIndex, error)
}
