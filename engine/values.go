package engine

import (
	"context"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/internal/memcache"
	"github.com/lancens/lancens/lance/table"
)

// A filter whose columns are all of the kinds expr.Values holds (numbers,
// booleans, text, dates and times) is evaluated with expr.EvalFilter over
// the columns converted once into Go slices and cached (val/<file>/<field
// id>), rather than with the filter's Program over Arrow, which converts
// each column again at every evaluation (integers widened, floats checked
// for NaN). Both run the same evaluator; the first spends its time on the
// filter alone.

// valuesKind reports whether values of Arrow type dt convert to
// expr.Values.
func valuesKind(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64, arrow.DURATION:
		return true
	}
	return false
}

// valuesFilter is a filter evaluated over cached expr.Values; nil when its
// columns are not all of kinds Values holds.
type valuesFilter struct {
	e    expr.Expr
	cols *colBinder
}

// newValuesFilter returns the values form of a filter e over the columns b
// binds, or nil.
func newValuesFilter(e expr.Expr, b *colBinder) *valuesFilter {
	for _, i := range b.used {
		if i != rowIDField && !valuesKind(b.schema.Field(i).Type) {
			return nil
		}
	}
	return &valuesFilter{e: e, cols: b}
}

// cachedValues is a column's values as the cache holds them.
type cachedValues struct {
	*expr.Values
	size int64
}

// CacheBytes implements memcache.Value.
func (v cachedValues) CacheBytes() int64 { return v.size }

// values returns the values of top-level field i of fragment frag, every
// physical row, as expr.Values, from the cache.
func (rd *reader) values(ctx context.Context, frag *table.Fragment, i int) (*expr.Values, error) {
	lf := rd.s.ds.Manifest().Schema.Fields[i]
	dt := rd.s.arrow.Field(i).Type
	load := func() (memcache.Value, error) {
		col, err := rd.column(ctx, frag, lf, dt)
		if err != nil {
			return nil, err
		}
		return toValues(col), nil
	}
	df, err := frag.FileHolding(lf)
	if err != nil {
		return nil, err
	}
	if df == nil {
		v, err := load()
		if err != nil {
			return nil, err
		}
		return v.(cachedValues).Values, nil
	}
	val, err := rd.e.cache.Get(ctx, rd.ref.cacheKey()+"val/"+rd.fileKey(df)+"/"+strconv.Itoa(int(lf.ID)), load)
	if err != nil {
		return nil, err
	}
	return val.(cachedValues).Values, nil
}

// toValues converts a column of a kind valuesKind accepts.
func toValues(a arrow.Array) cachedValues {
	n := a.Len()
	v := &expr.Values{Type: expr.TypeOf(a.DataType())}
	size := int64(64)
	if a.NullN() > 0 {
		v.Valid = make([]bool, n)
		for i := range n {
			v.Valid[i] = a.IsValid(i)
		}
		size += int64(n)
	}
	ints := func(get func(i int) int64) {
		v.Ints = make([]int64, n)
		for i := range n {
			v.Ints[i] = get(i)
		}
		size += 8 * int64(n)
	}
	floats := func(get func(i int) float64) {
		v.Floats = make([]float64, n)
		for i := range n {
			v.Floats[i] = get(i)
		}
		size += 8 * int64(n)
	}
	switch c := a.(type) {
	case *array.Boolean:
		v.Bools = make([]bool, n)
		for i := range n {
			v.Bools[i] = c.Value(i)
		}
		size += int64(n)
	case *array.Int8:
		ints(func(i int) int64 { return int64(c.Value(i)) })
	case *array.Int16:
		ints(func(i int) int64 { return int64(c.Value(i)) })
	case *array.Int32:
		ints(func(i int) int64 { return int64(c.Value(i)) })
	case *array.Int64:
		ints(func(i int) int64 { return c.Value(i) })
	case *array.Uint8:
		ints(func(i int) int64 { return int64(c.Value(i)) })
	case *array.Uint16:
		ints(func(i int) int64 { return int64(c.Value(i)) })
	case *array.Uint32:
		ints(func(i int) int64 { return int64(c.Value(i)) })
	case *array.Uint64:
		ints(func(i int) int64 { return int64(c.Value(i)) })
	case *array.Date32:
		ints(func(i int) int64 { return int64(c.Value(i)) })
	case *array.Date64:
		ints(func(i int) int64 { return int64(c.Value(i)) })
	case *array.Timestamp:
		ints(func(i int) int64 { return int64(c.Value(i)) })
	case *array.Time32:
		ints(func(i int) int64 { return int64(c.Value(i)) })
	case *array.Time64:
		ints(func(i int) int64 { return int64(c.Value(i)) })
	case *array.Duration:
		ints(func(i int) int64 { return int64(c.Value(i)) })
	case *array.Float16:
		floats(func(i int) float64 { return float64(c.Value(i).Float32()) })
	case *array.Float32:
		floats(func(i int) float64 { return float64(c.Value(i)) })
	case *array.Float64:
		floats(func(i int) float64 { return c.Value(i) })
	case *array.String:
		v.Strings = make([]string, n)
		for i := range n {
			v.Strings[i] = c.Value(i)
			size += 16 + int64(len(v.Strings[i]))
		}
	case *array.LargeString:
		v.Strings = make([]string, n)
		for i := range n {
			v.Strings[i] = c.Value(i)
			size += 16 + int64(len(v.Strings[i]))
		}
	}
	return cachedValues{Values: v, size: size}
}

// chunkColumns is the rows [start, end) of a fragment's columns, as
// expr.EvalFilter reads them.
type chunkColumns struct {
	rd         *reader
	ctx        context.Context
	frag       *table.Fragment
	b          *colBinder
	start, end int
}

// Len implements expr.Columns.
func (c *chunkColumns) Len() int { return c.end - c.start }

// Column implements expr.Columns: a top-level field's values (a field
// inside a struct is not available: the caller evaluates over Arrow).
func (c *chunkColumns) Column(path []string) (*expr.Values, bool, error) {
	if len(path) == 1 && path[0] == rowIDColumn && !c.b.schema.HasField(rowIDColumn) {
		ids := make([]int64, c.Len())
		for k := range ids {
			ids[k] = int64(rowAddress(c.frag.ID, c.start+k))
		}
		return &expr.Values{Type: expr.Type{Kind: expr.KindInt}, Ints: ids}, true, nil
	}
	if len(path) != 1 {
		return nil, false, nil
	}
	idx := c.b.schema.FieldIndices(path[0])
	if len(idx) == 0 || !valuesKind(c.b.schema.Field(idx[0]).Type) {
		return nil, false, nil
	}
	v, err := c.rd.values(c.ctx, c.frag, idx[0])
	if err != nil {
		return nil, false, err
	}
	out := &expr.Values{Type: v.Type}
	switch {
	case v.Ints != nil:
		out.Ints = v.Ints[c.start:c.end]
	case v.Floats != nil:
		out.Floats = v.Floats[c.start:c.end]
	case v.Strings != nil:
		out.Strings = v.Strings[c.start:c.end]
	case v.Bools != nil:
		out.Bools = v.Bools[c.start:c.end]
	}
	if v.Valid != nil {
		out.Valid = v.Valid[c.start:c.end]
	}
	return out, true, nil
}
