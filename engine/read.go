package engine

import (
	"context"
	"fmt"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/internal/memcache"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/schema"
	"github.com/lancens/lancens/lance/table"
)

// The read cache holds, under keys that start with the table's uuid:
//
//	ds/<branch>/<version>                 a snapshot (manifest, Arrow schema)
//	file/<file>                           an opened data file (its metadata)
//	col/<file>/<field id>                 a field's values, every physical row of the file
//	del/<branch>/<fragment>/<deletion>    a fragment's deleted offsets
//	vec/<file>/<field id>                 a vector column as float32s (search.go)
//	ix/<index uuid>/<build>               a loaded index build (index.go)
//
// where <file> names a data file by the root it is under (the branch's,
// or a base path's) and its path. Data and deletion files are written
// once and never change, so their values are shared by every version
// whose fragments have them: a write that adds a fragment leaves the
// columns of the others cached.

// reader reads the rows of one snapshot through the cache.
type reader struct {
	e   *Engine
	ref *tableRef
	s   *snapshot
	// narrowed, when set, is what scalar indexes say of the filter a
	// read evaluates (narrowFilter, indexscalar.go): filterChunks evaluates
	// it only on the rows they leave.
	narrowed *narrowing
	// recs are the table's index records, once read (indexRecords).
	recs []*indexRecord
}

func (e *Engine) reader(r *tableRef, s *snapshot) *reader { return &reader{e: e, ref: r, s: s} }

// fileKey names data file df of the snapshot's dataset for the cache.
func (rd *reader) fileKey(df *table.DataFile) string {
	if df.BaseID == nil {
		return "b:" + rd.s.ds.Branch() + "/" + df.Path
	}
	for _, bp := range rd.s.ds.Manifest().BasePaths {
		if bp.ID == *df.BaseID {
			return "p:" + bp.Path + "/" + df.Path
		}
	}
	return "id:" + strconv.Itoa(int(*df.BaseID)) + "/" + df.Path
}

// openFile returns the opened data file df, from the cache.
func (rd *reader) openFile(ctx context.Context, frag *table.Fragment, df *table.DataFile) (*file.Reader, error) {
	val, err := rd.e.cache.Get(ctx, rd.ref.cacheKey()+"file/"+rd.fileKey(df), func() (memcache.Value, error) {
		st, p, err := rd.s.ds.DataFile(ctx, df)
		if err != nil {
			return nil, err
		}
		r, err := file.Open(ctx, st, p, rd.readOptions(df))
		if err != nil {
			return nil, fmt.Errorf("fragment %d: %w", frag.ID, err)
		}
		if r.NumRows() != frag.PhysicalRows {
			return nil, fmt.Errorf("%w: fragment %d has %d rows, its data file %s %d", table.ErrCorrupt, frag.ID, frag.PhysicalRows, df.Path, r.NumRows())
		}
		return openedFile{r}, nil
	})
	if err != nil {
		return nil, err
	}
	return val.(openedFile).Reader, nil
}

// remoteCoalesceGap is the largest gap between two byte ranges of one read
// that a data file on object storage fetches as one request: a request
// costs milliseconds there, a megabyte of bytes read for nothing less.
const remoteCoalesceGap = 1 << 20

// readOptions are the options data file df is read with.
func (rd *reader) readOptions(df *table.DataFile) *file.ReadOptions {
	o := &file.ReadOptions{Size: int64(df.Size)}
	if !rd.ref.local {
		o.CoalesceGap = remoteCoalesceGap
	}
	return o
}

// openedFile is a data file's metadata as the cache holds it.
type openedFile struct{ *file.Reader }

// CacheBytes implements memcache.Value: an estimate of the metadata kept.
func (f openedFile) CacheBytes() int64 { return 4096 + int64(len(f.Schema().Fields))*512 }

// cachedArray is a decoded column as the cache holds it.
type cachedArray struct {
	arrow.Array
	size int64
}

// CacheBytes implements memcache.Value.
func (a cachedArray) CacheBytes() int64 { return a.size }

// column returns the values of top-level field f of the snapshot's schema
// for every physical row of fragment frag (deleted ones included), from
// the cache: nulls when no data file of the fragment holds the field. The
// caller must not release the array.
func (rd *reader) column(ctx context.Context, frag *table.Fragment, f *schema.Field, dt arrow.DataType) (arrow.Array, error) {
	df, err := frag.FileHolding(f)
	if err != nil {
		return nil, err
	}
	if df == nil {
		return array.MakeArrayOfNull(memory.DefaultAllocator, dt, int(frag.PhysicalRows)), nil
	}
	val, err := rd.e.cache.Get(ctx, rd.columnKey(df, f), func() (memcache.Value, error) {
		r, err := rd.openFile(ctx, frag, df)
		if err != nil {
			return nil, err
		}
		proj := &schema.Schema{Fields: []*schema.Field{f}}
		rec, err := r.ReadRange(ctx, proj, 0, frag.PhysicalRows)
		if err != nil {
			return nil, fmt.Errorf("fragment %d, field %s: %w", frag.ID, f.Name, err)
		}
		defer rec.Release()
		col := rec.Column(0)
		col.Retain()
		return cachedArray{col, arraySize(col.Data())}, nil
	})
	if err != nil {
		return nil, err
	}
	return val.(cachedArray).Array, nil
}

// columnKey is the cache key of field f's values in data file df.
func (rd *reader) columnKey(df *table.DataFile, f *schema.Field) string {
	return rd.ref.cacheKey() + "col/" + rd.fileKey(df) + "/" + strconv.Itoa(int(f.ID))
}

// cached reports whether the values of field f in fragment frag are in
// the cache (or need no reading: no file holds them).
func (rd *reader) cached(frag *table.Fragment, f *schema.Field) bool {
	df, err := frag.FileHolding(f)
	if err != nil || df == nil {
		return true
	}
	_, ok := rd.e.cache.Peek(rd.columnKey(df, f))
	return ok
}

// takeFromFile reads the values of top-level field i of the snapshot's
// schema for the rows of frag at offsets rows straight from the data file,
// without caching the column: for a few rows of a column not cached.
func (rd *reader) takeFromFile(ctx context.Context, frag *table.Fragment, i int, rows []int) (arrow.Array, error) {
	f := rd.s.ds.Manifest().Schema.Fields[i]
	df, err := frag.FileHolding(f)
	if err != nil {
		return nil, err
	}
	if df == nil {
		return array.MakeArrayOfNull(memory.DefaultAllocator, rd.s.arrow.Field(i).Type, len(rows)), nil
	}
	r, err := rd.openFile(ctx, frag, df)
	if err != nil {
		return nil, err
	}
	offsets := make([]uint64, len(rows))
	for k, o := range rows {
		offsets[k] = uint64(o)
	}
	rec, err := r.Take(ctx, &schema.Schema{Fields: []*schema.Field{f}}, offsets)
	if err != nil {
		return nil, fmt.Errorf("fragment %d, field %s: %w", frag.ID, f.Name, err)
	}
	defer rec.Release()
	col := rec.Column(0)
	col.Retain()
	return col, nil
}

// arraySize returns the bytes of d's buffers and its children's.
func arraySize(d arrow.ArrayData) int64 {
	var n int64 = 64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += arraySize(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += arraySize(d.Dictionary())
	}
	return n
}

// deleted is a fragment's deleted offsets as the cache holds them.
type deleted struct{ *roaring.Bitmap }

// CacheBytes implements memcache.Value.
func (d deleted) CacheBytes() int64 { return 64 + int64(d.GetSizeInBytes()) }

// deletions returns the offsets of the deleted rows of frag (empty when
// it has none), from the cache. The caller must not change the bitmap.
func (rd *reader) deletions(ctx context.Context, frag *table.Fragment) (*roaring.Bitmap, error) {
	if frag.Deletion == nil {
		return emptyBitmap, nil
	}
	del := frag.Deletion
	key := fmt.Sprintf("%sdel/%s/%d/%d-%d-%d", rd.ref.cacheKey(), rd.s.ds.Branch(), frag.ID, del.ReadVersion, del.ID, del.Kind)
	val, err := rd.e.cache.Get(ctx, key, func() (memcache.Value, error) {
		b, err := rd.s.ds.Deletions(ctx, frag)
		if err != nil {
			return nil, err
		}
		b.RunOptimize()
		return deleted{b}, nil
	})
	if err != nil {
		return nil, err
	}
	return val.(deleted).Bitmap, nil
}

var emptyBitmap = roaring.New()

// rowAddress is Lance's address of a row: its fragment's id in the high 32
// bits, its offset in the fragment in the low 32.
func rowAddress(frag uint64, offset int) uint64 { return frag<<32 | uint64(offset) }
