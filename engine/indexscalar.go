package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/schema"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
)

// A scalar index maps the values of a column to the rows holding them, by
// row address, over the fragments its build covers (their deleted rows
// too, see index.go); rows whose value is null are not in it.
//
//   - BTREE: every (value, row) pair, sorted by value: equality, IN and
//     ranges are binary searches.
//   - BITMAP: each distinct value with the bitmap of its rows.
//   - LABEL_LIST: each distinct element of a list column with the bitmap
//     of the rows whose list holds it (array_has, array_has_any,
//     array_has_all).
//
// Values are kept as keys of one class, which says which constants of a
// filter compare with them exactly as the filter would (expr.Conditions):
// the int64 of integer and boolean columns, the float64 of float columns,
// the bytes of string columns; integers and floats compare with each
// other exactly, as SQLite compares them. Columns of other types (dates,
// times, decimals, binary, uint64) get an index whose keys are their
// values' text, from which no filter condition is answered: filters on
// them read the column.

// keyClass is the class of a scalar index's keys.
type keyClass byte

const (
	keysOpaque keyClass = iota // text of the values, answering nothing
	keysInt                    // int64
	keysFloat                  // float64
	keysText                   // strings
)

// scalarIndex is a loaded scalar index. It is never changed once built.
type scalarIndex struct {
	kind  string // store.IndexBTree, IndexBitmap or IndexLabelList
	class keyClass
	// The keys, in one slice by class, sorted: one per row for a BTREE,
	// distinct for the others. Opaque keys are in texts.
	ints   []int64
	floats []float64
	texts  []string
	// addrs are the rows of a BTREE's keys; sets those of the others'.
	addrs []uint64
	sets  []*roaring64.Bitmap
	size  int64
}

// CacheBytes implements memcache.Value.
func (si *scalarIndex) CacheBytes() int64 { return si.size }

// keys returns the number of keys.
func (si *scalarIndex) keys() int { return max(len(si.ints), len(si.floats), len(si.texts)) }

// classOf returns the key class of values of type dt.
func classOf(dt arrow.DataType) keyClass {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.BOOL:
		return keysInt
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return keysFloat
	case arrow.STRING, arrow.LARGE_STRING:
		return keysText
	}
	return keysOpaque
}

// buildScalarIndex builds scalar index ix over column col of every
// fragment of rd's snapshot.
func (rd *reader) buildScalarIndex(ctx context.Context, col indexColumn, ix *indexRecord) (*scalarIndex, error) {
	dt := col.field.Type
	if ix.Type == store.IndexLabelList {
		dt = dt.(arrow.ListLikeType).Elem()
	}
	b := &scalarBuilder{si: &scalarIndex{kind: ix.Type, class: classOf(dt)}, bySet: map[any]*roaring64.Bitmap{}}
	for _, frag := range rd.s.ds.Manifest().Fragments {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		values, err := rd.indexValues(ctx, frag, col)
		if err != nil {
			return nil, err
		}
		err = b.addFragment(frag.ID, values)
		values.Release()
		if err != nil {
			return nil, err
		}
	}
	return b.finish(), nil
}

// scalarBuilder gathers the keys of a scalar index.
type scalarBuilder struct {
	si *scalarIndex
	// pairs are a BTREE's (key, row) pairs before sorting.
	pairs []keyRow
	// bySet are the other kinds' rows by key.
	bySet map[any]*roaring64.Bitmap
}

type keyRow struct {
	key  any // int64, float64 or string, by class
	addr uint64
}

// addFragment adds the values of fragment frag (a list per row for a
// LABEL_LIST index).
func (b *scalarBuilder) addFragment(frag uint64, values arrow.Array) error {
	if values.DataType().ID() == arrow.NULL {
		return nil
	}
	if b.si.kind != store.IndexLabelList {
		for i := range values.Len() {
			if k, ok := scalarKey(b.si.class, values, i); ok {
				b.add(k, rowAddress(frag, i))
			}
		}
		return nil
	}
	lists, ok := values.(array.ListLike)
	if !ok {
		return fmt.Errorf("%w: a LABEL_LIST index of %s values", errBuild, values.DataType())
	}
	elems := lists.ListValues()
	for i := range lists.Len() {
		if lists.IsNull(i) {
			continue
		}
		start, end := lists.ValueOffsets(i)
		for j := start; j < end; j++ {
			if k, ok := scalarKey(b.si.class, elems, int(j)); ok {
				b.add(k, rowAddress(frag, i))
			}
		}
	}
	return nil
}

func (b *scalarBuilder) add(k any, addr uint64) {
	if b.si.kind == store.IndexBTree {
		b.pairs = append(b.pairs, keyRow{k, addr})
		return
	}
	set := b.bySet[k]
	if set == nil {
		set = roaring64.New()
		b.bySet[k] = set
	}
	set.Add(addr)
}

// scalarKey returns the key of value i of a in class c, or false for a null
// or a NaN (which no comparison keeps).
func scalarKey(c keyClass, a arrow.Array, i int) (any, bool) {
	if a.IsNull(i) {
		return nil, false
	}
	switch a := a.(type) {
	case *array.Int8:
		return int64(a.Value(i)), true
	case *array.Int16:
		return int64(a.Value(i)), true
	case *array.Int32:
		return int64(a.Value(i)), true
	case *array.Int64:
		return a.Value(i), true
	case *array.Uint8:
		return int64(a.Value(i)), true
	case *array.Uint16:
		return int64(a.Value(i)), true
	case *array.Uint32:
		return int64(a.Value(i)), true
	case *array.Boolean:
		if a.Value(i) {
			return int64(1), true
		}
		return int64(0), true
	case *array.Float16:
		f := float64(a.Value(i).Float32())
		return f, !math.IsNaN(f)
	case *array.Float32:
		f := float64(a.Value(i))
		return f, !math.IsNaN(f)
	case *array.Float64:
		f := a.Value(i)
		return f, !math.IsNaN(f)
	case *array.String:
		return a.Value(i), true
	case *array.LargeString:
		return a.Value(i), true
	}
	if c != keysOpaque {
		return nil, false
	}
	return a.ValueStr(i), true
}

// compareKeys orders keys of one class.
func compareKeys(a, b any) int {
	switch a := a.(type) {
	case int64:
		return cmp.Compare(a, b.(int64))
	case float64:
		return cmp.Compare(a, b.(float64))
	}
	return cmp.Compare(a.(string), b.(string))
}

// finish sorts what was gathered into the index.
func (b *scalarBuilder) finish() *scalarIndex {
	si := b.si
	var keys []any
	if si.kind == store.IndexBTree {
		slices.SortFunc(b.pairs, func(x, y keyRow) int {
			if c := compareKeys(x.key, y.key); c != 0 {
				return c
			}
			return cmp.Compare(x.addr, y.addr)
		})
		si.addrs = make([]uint64, len(b.pairs))
		for i, p := range b.pairs {
			keys = append(keys, p.key)
			si.addrs[i] = p.addr
		}
	} else {
		for k := range b.bySet {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareKeys)
		for _, k := range keys {
			set := b.bySet[k]
			set.RunOptimize()
			si.sets = append(si.sets, set)
		}
	}
	for _, k := range keys {
		switch k := k.(type) {
		case int64:
			si.ints = append(si.ints, k)
		case float64:
			si.floats = append(si.floats, k)
		case string:
			si.texts = append(si.texts, k)
		}
	}
	si.size = si.memory()
	return si
}

// memory estimates the bytes si holds.
func (si *scalarIndex) memory() int64 {
	n := int64(256 + 8*(cap(si.ints)+cap(si.floats)+cap(si.addrs)) + 16*cap(si.texts))
	for _, t := range si.texts {
		n += int64(len(t))
	}
	for _, s := range si.sets {
		n += 64 + int64(s.GetSizeInBytes())
	}
	return n
}

// The file of a scalar index: magic, the format version, the kind and key
// class (a byte each), the number of keys and the keys (zig-zag varints,
// float64 bits, or length-prefixed bytes), then a BTREE's row addresses
// (varints) or each key's bitmap (length-prefixed, in roaring64's
// portable form), and a CRC-32C of everything before it.
const (
	scalarMagic   = "LNSI"
	scalarVersion = 1
)

var scalarKinds = []string{store.IndexBTree, store.IndexBitmap, store.IndexLabelList}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// marshal returns the file of si.
func (si *scalarIndex) marshal() []byte {
	b := []byte(scalarMagic)
	b = binary.AppendUvarint(b, scalarVersion)
	b = append(b, byte(slices.Index(scalarKinds, si.kind)), byte(si.class))
	n := si.keys()
	b = binary.AppendUvarint(b, uint64(n))
	for i := range n {
		switch {
		case si.ints != nil:
			b = binary.AppendVarint(b, si.ints[i])
		case si.floats != nil:
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(si.floats[i]))
		default:
			b = binary.AppendUvarint(b, uint64(len(si.texts[i])))
			b = append(b, si.texts[i]...)
		}
	}
	if si.kind == store.IndexBTree {
		for _, a := range si.addrs {
			b = binary.AppendUvarint(b, a)
		}
	} else {
		for _, s := range si.sets {
			data, _ := s.MarshalBinary()
			b = binary.AppendUvarint(b, uint64(len(data)))
			b = append(b, data...)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

var errScalarCorrupt = errors.New("corrupt scalar index")

// loadScalarIndex reads the file of a scalar index. It returns an error
// wrapping errScalarCorrupt, never panicking, for data that is truncated,
// corrupt or of another format.
func loadScalarIndex(data []byte) (*scalarIndex, error) {
	bad := func(what string) (*scalarIndex, error) { return nil, fmt.Errorf("%w: %s", errScalarCorrupt, what) }
	if len(data) < len(scalarMagic)+4 || string(data[:len(scalarMagic)]) != scalarMagic {
		return bad("not a scalar index")
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return bad("checksum mismatch")
	}
	r := bytes.NewReader(body[len(scalarMagic):])
	uv := func() uint64 {
		v, err := binary.ReadUvarint(r)
		if err != nil {
			return math.MaxUint64
		}
		return v
	}
	if uv() != scalarVersion {
		return bad("unsupported version")
	}
	kind, _ := r.ReadByte()
	class, err := r.ReadByte()
	if err != nil || int(kind) >= len(scalarKinds) || keyClass(class) > keysText {
		return bad("kind or key class")
	}
	si := &scalarIndex{kind: scalarKinds[kind], class: keyClass(class)}
	n := uv()
	if n > uint64(r.Len()) {
		return bad("key count")
	}
	for range n {
		switch si.class {
		case keysInt:
			v, err := binary.ReadVarint(r)
			if err != nil {
				return bad("keys")
			}
			si.ints = append(si.ints, v)
		case keysFloat:
			var w [8]byte
			if _, err := r.Read(w[:]); err != nil || r.Len() < 0 {
				return bad("keys")
			}
			si.floats = append(si.floats, math.Float64frombits(binary.LittleEndian.Uint64(w[:])))
		default:
			l := uv()
			if l > uint64(r.Len()) {
				return bad("keys")
			}
			t := make([]byte, l)
			_, _ = r.Read(t)
			si.texts = append(si.texts, string(t))
		}
	}
	if si.kind == store.IndexBTree {
		si.addrs = make([]uint64, 0, n)
		for range n {
			v, err := binary.ReadUvarint(r)
			if err != nil {
				return bad("rows")
			}
			si.addrs = append(si.addrs, v)
		}
	} else {
		for range n {
			l := uv()
			if l > uint64(r.Len()) {
				return bad("bitmaps")
			}
			data := make([]byte, l)
			_, _ = r.Read(data)
			set := roaring64.New()
			if err := set.UnmarshalBinary(data); err != nil {
				return bad("bitmap")
			}
			si.sets = append(si.sets, set)
		}
	}
	if r.Len() != 0 {
		return bad("trailing bytes")
	}
	if !sortedKeys(si) {
		return bad("keys out of order")
	}
	si.size = si.memory()
	return si, nil
}

// sortedKeys reports whether si's keys are in order (strictly, but for a
// BTREE's).
func sortedKeys(si *scalarIndex) bool {
	strict := si.kind != store.IndexBTree
	ok := func(c int) bool { return c < 0 || c == 0 && !strict }
	for i := 1; i < si.keys(); i++ {
		var c int
		switch {
		case si.ints != nil:
			c = cmp.Compare(si.ints[i-1], si.ints[i])
		case si.floats != nil:
			c = cmp.Compare(si.floats[i-1], si.floats[i])
		default:
			c = cmp.Compare(si.texts[i-1], si.texts[i])
		}
		if !ok(c) {
			return false
		}
	}
	return true
}

// keyRange returns the positions [lo, hi) of the keys within the bounds
// (nil: unbounded), or false when a bound does not compare with the keys
// (see keyClass).
func (si *scalarIndex) keyRange(lo, hi *expr.Bound) (int, int, bool) {
	start, end := 0, si.keys()
	if lo != nil {
		pos, ok := si.search(lo.Literal, !lo.Inclusive)
		if !ok {
			return 0, 0, false
		}
		start = pos
	}
	if hi != nil {
		pos, ok := si.search(hi.Literal, hi.Inclusive)
		if !ok {
			return 0, 0, false
		}
		end = pos
	}
	return start, max(start, end), true
}

// search returns the position of the first key above v (after) or at or
// above it, or false when v does not compare with the keys.
func (si *scalarIndex) search(v expr.Literal, after bool) (int, bool) {
	var c func(i int) int // key i against v
	switch {
	case si.class == keysInt && (v.Kind == expr.KindInt || v.Kind == expr.KindBool):
		x := v.Value.(int64)
		c = func(i int) int { return cmp.Compare(si.ints[i], x) }
	case si.class == keysInt && v.Kind == expr.KindFloat && !math.IsNaN(v.Value.(float64)):
		x := v.Value.(float64)
		c = func(i int) int { return compareIntFloat(si.ints[i], x) }
	case si.class == keysFloat && (v.Kind == expr.KindInt || v.Kind == expr.KindBool):
		x := v.Value.(int64)
		c = func(i int) int { return -compareIntFloat(x, si.floats[i]) }
	case si.class == keysFloat && v.Kind == expr.KindFloat && !math.IsNaN(v.Value.(float64)):
		x := v.Value.(float64)
		c = func(i int) int { return cmp.Compare(si.floats[i], x) }
	case si.class == keysText && v.Kind == expr.KindString:
		x := v.Value.(string)
		c = func(i int) int { return cmp.Compare(si.texts[i], x) }
	default:
		return 0, false
	}
	if after {
		return sort.Search(si.keys(), func(i int) bool { return c(i) > 0 }), true
	}
	return sort.Search(si.keys(), func(i int) bool { return c(i) >= 0 }), true
}

// compareIntFloat compares integer k with float x (not a NaN) exactly.
func compareIntFloat(k int64, x float64) int {
	switch {
	case x >= 0x1p63:
		return -1
	case x < -0x1p63:
		return 1
	}
	f := math.Floor(x)
	if c := cmp.Compare(k, int64(f)); c != 0 {
		return c
	}
	if f == x {
		return 0
	}
	return -1 // k is floor(x), below x
}

// rowsIn returns the rows of the keys at positions [lo, hi).
func (si *scalarIndex) rowsIn(lo, hi int) *roaring64.Bitmap {
	out := roaring64.New()
	if si.kind == store.IndexBTree {
		out.AddMany(si.addrs[lo:hi])
		return out
	}
	for _, s := range si.sets[lo:hi] {
		out.Or(s)
	}
	return out
}

// answer returns the rows, of the fragments the index covers, that leaf
// condition c (on the index's column) may keep: a superset of those the
// filter keeps. It returns false when the index does not answer c.
func (si *scalarIndex) answer(c *expr.Condition) (*roaring64.Bitmap, bool) {
	switch {
	case c.Op == expr.CondRange && si.kind != store.IndexLabelList:
		lo, hi, ok := si.keyRange(c.Lo, c.Hi)
		if !ok {
			return nil, false
		}
		return si.rowsIn(lo, hi), true
	case c.Op == expr.CondIn && si.kind != store.IndexLabelList,
		c.Op == expr.CondHasAny && si.kind == store.IndexLabelList:
		out := roaring64.New()
		for _, v := range c.Values {
			b := expr.Bound{Literal: v, Inclusive: true}
			lo, hi, ok := si.keyRange(&b, &b)
			if !ok {
				return nil, false
			}
			out.Or(si.rowsIn(lo, hi))
		}
		return out, true
	case c.Op == expr.CondHasAll && si.kind == store.IndexLabelList:
		var out *roaring64.Bitmap
		for _, v := range c.Values {
			b := expr.Bound{Literal: v, Inclusive: true}
			lo, hi, ok := si.keyRange(&b, &b)
			if !ok {
				return nil, false
			}
			rows := si.rowsIn(lo, hi)
			if out == nil {
				out = rows
			} else {
				out.And(rows)
			}
		}
		return out, true
	}
	return nil, false
}

// narrowing is what scalar indexes say of a filter, fragment by
// fragment: the offsets of the rows of a fragment the filter may keep;
// a fragment without an entry is read whole.
type narrowing struct {
	frags map[uint64]*roaring.Bitmap
	// used names the indexes that answered, for plans.
	used []string
}

// scalarColumn is a scalar index a filter may use.
type scalarColumn struct {
	rec *indexRecord
	col indexColumn
	si  *scalarIndex
	cov coverage
}

// narrowFilter sets rd.narrowed to what the scalar indexes of the
// snapshot's table answer of filter (nothing when none does, or on a
// branch). The filter is planned already: errors of its syntax are not
// this function's. It returns the errors of reading the index records
// and the indexes.
func (rd *reader) narrowFilter(ctx context.Context, filter string) error {
	rd.narrowed = nil
	if rd.ref.branch != "" || filter == "" {
		return nil
	}
	e, err := expr.Parse(filter)
	if err != nil {
		return nil
	}
	cond := expr.Conditions(e)
	if cond == nil {
		return nil
	}
	recs, err := rd.indexRecords(ctx)
	if err != nil {
		return err
	}
	cols := map[string][]*scalarColumn{}
	for _, ix := range recs {
		if store.IsVectorIndex(ix.Type) || ix.Type == store.IndexInverted || !ix.servesAt(rd.s.ds.Version()) {
			continue
		}
		col, ok := columnByID(rd.s, ix.def.FieldID)
		if !ok {
			continue
		}
		cov, err := rd.coverageOf(ix.build, col)
		if err != nil {
			return dataError(rd.ref.id, err)
		}
		if len(cov.covered) == 0 {
			continue
		}
		loaded, err := rd.e.loadIndex(ctx, rd.ref, ix)
		if err != nil {
			if errors.Is(err, blob.ErrNotFound) {
				continue // rebuilt or dropped since the record was read
			}
			return dataError(rd.ref.id, err)
		}
		cols[col.name] = append(cols[col.name], &scalarColumn{rec: ix, col: col, si: loaded.(*scalarIndex), cov: cov})
	}
	if len(cols) == 0 {
		return nil
	}
	n := &narrowing{}
	if frags, ok := rd.answerCondition(cond, cols, n); ok {
		n.frags = frags
		rd.narrowed = n
	}
	return nil
}

// answerCondition returns, by fragment, the rows that condition c may
// keep according to the indexes of cols (by column path), adding the
// names of those that answer to n.used; fragments it says nothing of are
// not in the map, and false means it says nothing at all.
func (rd *reader) answerCondition(c *expr.Condition, cols map[string][]*scalarColumn, n *narrowing) (map[uint64]*roaring.Bitmap, bool) {
	switch c.Op {
	case expr.CondAnd:
		// Where both terms say something of a fragment, a row must pass
		// both; where one does, it must pass that one.
		var out map[uint64]*roaring.Bitmap
		for _, term := range c.Terms {
			sub, ok := rd.answerCondition(term, cols, n)
			if !ok {
				continue
			}
			if out == nil {
				out = sub
				continue
			}
			for frag, rows := range sub {
				if have, ok := out[frag]; ok {
					have.And(rows)
				} else {
					out[frag] = rows
				}
			}
		}
		return out, out != nil
	case expr.CondOr:
		// A fragment one term says nothing of may hold any row.
		var out map[uint64]*roaring.Bitmap
		for _, term := range c.Terms {
			sub, ok := rd.answerCondition(term, cols, n)
			if !ok {
				return nil, false
			}
			if out == nil {
				out = sub
				continue
			}
			for frag, rows := range out {
				if other, ok := sub[frag]; ok {
					rows.Or(other)
				} else {
					delete(out, frag)
				}
			}
		}
		return out, out != nil
	}
	for _, sc := range cols[schema.FormatPath(c.Path...)] {
		rows, ok := sc.si.answer(c)
		if !ok {
			continue
		}
		n.used = append(n.used, fmt.Sprintf("%s index %s on %s", sc.rec.Type, sc.rec.Name, sc.col.name))
		out := map[uint64]*roaring.Bitmap{}
		for frag := range sc.cov.covered {
			out[frag] = roaring.New()
		}
		it := rows.ManyIterator()
		buf := make([]uint64, 1024)
		for got := it.NextMany(buf); got > 0; got = it.NextMany(buf) {
			for _, a := range buf[:got] {
				if set, ok := out[a>>32]; ok {
					set.Add(uint32(a))
				}
			}
		}
		return out, true
	}
	return nil, false
}

// selectedAmong returns the offsets, among candidates, of the rows of frag
// that are not deleted (del) and that f keeps. It returns the errors of
// reading the filter's columns and of evaluating it.
func (rd *reader) selectedAmong(ctx context.Context, frag *table.Fragment, f *filter,
	candidates *roaring.Bitmap, del *roaring.Bitmap) ([]int, error) {
	rows := make([]int, 0, candidates.GetCardinality())
	it := candidates.Iterator()
	for it.HasNext() {
		o := it.Next()
		if int(o) < int(frag.PhysicalRows) && !del.Contains(o) {
			rows = append(rows, int(o))
		}
	}
	if len(rows) == 0 {
		return nil, nil
	}
	batch, err := rd.batch(ctx, frag, f.cols, rows)
	if err != nil {
		return nil, err
	}
	defer batch.Release()
	words, err := f.prog.Filter(batch)
	if err != nil {
		return nil, err
	}
	var live []int
	for k, r := range rows {
		if words[k/64]>>(k%64)&1 != 0 {
			live = append(live, r)
		}
	}
	return live, nil
}
