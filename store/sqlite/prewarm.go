package sqlite

import (
	"context"

	"github.com/lancens/lancens/fts"
	"github.com/lancens/lancens/store"
)

// PrewarmIndex implements store.Indexes: a vector index is loaded into the
// memory cache, a full-text index's posting lists are built there (or
// caught up with the rows written since), as the first search would.
func (db *DB) PrewarmIndex(ctx context.Context, id []string, name string) error {
	return db.read(ctx, func(tx *Tx) error {
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		r, err := findIndex(ctx, tx, t, name)
		if err != nil {
			return err
		}
		if r.status != store.IndexSucceeded {
			return store.Errorf(store.CodeInvalidTableState, "index %q of table %s is %s: only a built index can be loaded",
				name, displayID(id), r.status)
		}
		switch {
		case store.IsVectorIndex(r.indexType):
			_, err := db.loadVectorIndex(ctx, tx, t, r.uuid, r.maxRowID.Int64)
			return err
		case r.indexType == store.IndexInverted:
			return db.prewarmPostings(ctx, tx, t, r.uuid)
		}
		return nil
	})
}

// prewarmPostings builds the posting lists of full-text index uuid of t in
// the memory cache. An index that no longer applies to its column (whose
// storage changed) has none.
func (db *DB) prewarmPostings(ctx context.Context, tx *Tx, t *tableRow, uuid string) error {
	_, ts, err := schemaAt(ctx, tx, t, nil)
	if err != nil {
		return err
	}
	idx, err := textIndexes(ctx, tx, t, ts)
	if err != nil {
		return err
	}
	s := &textSearch{ctx: ctx, tx: tx, db: db, table: t.UUID, indexes: idx, postings: map[string]*fts.Index{}}
	defer s.release()
	for _, ix := range idx {
		if ix.uuid == uuid {
			_, err := s.index(fts.Column{Name: ix.column, Analyzer: ix.analyzer})
			return err
		}
	}
	return nil
}
