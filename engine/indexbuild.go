package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/internal/memcache"
	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
)

// loadedIndex is a build of an index as the cache holds it: a
// *vectorIndex, *textIndex or *scalarIndex.
type loadedIndex interface {
	memcache.Value
}

// File extensions of the builds of each kind of index.
const (
	vectorExt = ".vecidx" // vecindex's serialised form
	textExt   = ".fts"    // fts's serialised posting lists
	scalarExt = ".scalar" // scalarIndex's (indexscalar.go)
)

// indexCacheKey is the cache key of build id of index uuid of table r
// (with id "", the prefix of the index's keys).
func indexCacheKey(r *tableRef, uuid, build string) string {
	return r.cacheKey() + "ix/" + uuid + "/" + build
}

// randomBytes returns n random bytes.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// build builds index ix over every fragment of snapshot s of table r,
// writes its file below the table's root and caches what it built. It
// returns TableColumnNotFound (12) when the index's column is gone,
// InvalidInput (13) when the data do not fit the index's parameters,
// ctx's error, and the errors of reading and writing the table's files
// (dataError).
func (e *Engine) build(ctx context.Context, r *tableRef, s *snapshot, ix *indexRecord) (*indexBuild, error) {
	col, ok := columnByID(s, ix.def.FieldID)
	if !ok {
		return nil, store.Errorf(store.CodeTableColumnNotFound, "column %s of index %s no longer exists", ix.def.Column, ix.Name)
	}
	rd := e.reader(r, s)
	b := &indexBuild{ID: hex.EncodeToString(randomBytes(8)), Version: s.ds.Version()}
	lf := s.ds.Manifest().Schema.Fields[col.top]
	for _, frag := range s.ds.Manifest().Fragments {
		key, err := rd.columnFile(frag, lf)
		if err != nil {
			return nil, dataError(r.id, err)
		}
		b.Fragments = append(b.Fragments, coveredFrag{ID: frag.ID, File: key, Rows: frag.PhysicalRows})
	}
	var built loadedIndex
	var data []byte
	var err error
	switch {
	case store.IsVectorIndex(ix.Type):
		var vi *vectorIndex
		if vi, err = rd.buildVectorIndex(ctx, col, ix); err == nil {
			built = vi
			data, err = vi.ix.MarshalBinary()
			b.File = indexDir(ix.UUID) + b.ID + vectorExt
		}
	case ix.Type == store.IndexInverted:
		var ti *textIndex
		if ti, err = rd.buildTextIndex(ctx, col, ix, b); err == nil {
			built = ti
			data, err = ti.ix.MarshalBinary()
			b.File = indexDir(ix.UUID) + b.ID + textExt
		}
	default:
		var si *scalarIndex
		if si, err = rd.buildScalarIndex(ctx, col, ix); err == nil {
			built = si
			data = si.marshal()
			b.File = indexDir(ix.UUID) + b.ID + scalarExt
		}
	}
	if err != nil {
		return nil, buildError(ctx, r.id, ix, err)
	}
	if err := blob.Put(ctx, r.root, b.File, data); err != nil {
		return nil, dataError(r.id, err)
	}
	b.Size = int64(len(data))
	e.cache.Put(indexCacheKey(r, ix.UUID, b.ID), built)
	return b, nil
}

// errBuild marks an error of the data an index is built from (no vectors,
// parameters that do not fit them).
var errBuild = errors.New("the data do not fit the index")

// buildError returns the error of building index ix: ctx's when it ended,
// InvalidInput (13) for an error of the data (errBuild, or vecindex's
// refusals), dataError's otherwise.
func buildError(ctx context.Context, id []string, ix *indexRecord, err error) error {
	var se *store.Error
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &se):
		return err
	case errors.Is(err, errBuild):
		return &store.Error{Code: store.CodeInvalidInput, Message: fmt.Sprintf("building index %s: %v", ix.Name, err), Cause: err}
	}
	return dataError(id, err)
}

// maxIndexFile bounds the file of an index a load reads whole.
const maxIndexFile = math.MaxInt32

// loadIndex returns the last build of index ix of table r, from the cache
// or read from its file. It returns an error wrapping blob.ErrNotFound
// when the file is gone (a rebuild or a drop removed it since ix was
// read), and table.ErrCorrupt for a file that does not decode.
func (e *Engine) loadIndex(ctx context.Context, r *tableRef, ix *indexRecord) (loadedIndex, error) {
	b := ix.build
	val, err := e.cache.Get(ctx, indexCacheKey(r, ix.UUID, b.ID), func() (memcache.Value, error) {
		data, err := blob.ReadAll(ctx, r.root, b.File, maxIndexFile)
		if err != nil {
			return nil, err
		}
		var out loadedIndex
		switch {
		case store.IsVectorIndex(ix.Type):
			out, err = loadVectorIndex(data)
		case ix.Type == store.IndexInverted:
			out, err = loadTextIndex(data, ix, b)
		default:
			out, err = loadScalarIndex(data)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: index %s, file %s: %v", table.ErrCorrupt, ix.Name, b.File, err)
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return val.(loadedIndex), nil
}

// indexValues returns the values of column col for every physical row of
// fragment frag, from the cache. The caller releases the array.
func (rd *reader) indexValues(ctx context.Context, frag *table.Fragment, col indexColumn) (arrow.Array, error) {
	lf := rd.s.ds.Manifest().Schema.Fields[col.top]
	a, err := rd.column(ctx, frag, lf, rd.s.arrow.Field(col.top).Type)
	if err != nil {
		return nil, err
	}
	return structChild(a, col.path), nil
}
