package legacy

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Every row of a rows table is a row version, visible from table version
// _from up to, not including, _to: version v shows the rows with
// _from <= v < _to. A write never changes a visible row; it inserts row
// versions with _from = its version and retires others (_to = its
// version), so the rows a version shows and not an earlier one, and those
// it no longer shows, are two ranges: on _from (the index PrepareReads
// adds) and on _to (the rows table's own (_to, _from) index). Row ids only
// grow. Rows a crash left behind (_from past the latest version, and the
// tombstones of failed writes, _from = _to) are visible at no version.

// BatchRows is the number of rows per record batch Rows yields.
const BatchRows = 8192

// PrepareReads indexes the rows tables of t by _from, so that the rows a
// version adds are a range; the index goes with its table. It returns the
// database's error.
func PrepareReads(ctx context.Context, st Store, t *Table) error {
	return st.WriteLegacy(ctx, func(tx Tx) error {
		for _, l := range t.Lines {
			if !l.HasRows() {
				continue
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s_from ON %s (_from)`, l.rows, l.rows)); err != nil {
				return fmt.Errorf("index the rows of branch %q: %w", l.Branch, err)
			}
		}
		return nil
	})
}

// Rows yields, in row id order, the rows line l shows at version v and did
// not show at version prev (prev 0: every row of v), read with schema s
// into record batches of schema as (s.Arrow, or a schema of the same
// fields whose types are read from the stored values: see AppendValue).
// Their row ids are appended to *ids as the batches are yielded. The
// sequence ends with the database's error, or an error naming a value
// that does not fit its type.
func (l *Line) Rows(ctx context.Context, st Store, s *Schema, as *arrow.Schema, prev, v int64, ids *[]int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		var stopped bool
		err := st.ReadLegacy(ctx, func(tx Tx) error {
			cols := s.columns()
			for i, c := range cols {
				cols[i] = `"` + c + `"`
			}
			list := ""
			if len(cols) > 0 {
				list = ", " + strings.Join(cols, ", ")
			}
			where, args := `_from <= ? AND _to > ?`, []any{v, v}
			if prev > 0 {
				where, args = `_from > ? AND _from <= ? AND _to > ?`, []any{prev, v, v}
			}
			rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT _rowid%s FROM %s WHERE %s ORDER BY _rowid`, list, l.rows, where), args...)
			if err != nil {
				return fmt.Errorf("read the rows of version %d: %w", v, err)
			}
			defer rows.Close()
			b := newBatcher(as)
			defer b.release()
			vals := make([]any, 1+len(cols))
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			for rows.Next() {
				if err := rows.Scan(ptrs...); err != nil {
					return fmt.Errorf("read the rows of version %d: %w", v, err)
				}
				id := vals[0].(int64)
				if err := b.add(vals[1:]); err != nil {
					return fmt.Errorf("row %d of version %d: %w", id, v, err)
				}
				*ids = append(*ids, id)
				if b.n == BatchRows {
					if stopped = !b.yieldTo(yield); stopped {
						return nil
					}
				}
			}
			if err := rows.Err(); err != nil {
				return fmt.Errorf("read the rows of version %d: %w", v, err)
			}
			if b.n > 0 {
				stopped = !b.yieldTo(yield)
			}
			return nil
		})
		if err != nil && !stopped {
			yield(nil, err)
		}
	}
}

// Retired returns, ascending, the ids of the rows line l shows at version
// prev and no longer at version v. It returns the database's error.
func (l *Line) Retired(ctx context.Context, st Store, prev, v int64) ([]int64, error) {
	var out []int64
	err := st.ReadLegacy(ctx, func(tx Tx) error {
		out = nil
		rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT _rowid FROM %s WHERE _to > ? AND _to <= ? AND _from <= ? ORDER BY _rowid`, l.rows), prev, v, prev)
		if err != nil {
			return fmt.Errorf("read the rows version %d retired: %w", v, err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return fmt.Errorf("read the rows version %d retired: %w", v, err)
			}
			out = append(out, id)
		}
		return rows.Err()
	})
	return out, err
}

// batcher builds record batches of one schema from stored rows, each
// field decoded from its span of the row's columns (FieldDecoder).
type batcher struct {
	schema   *arrow.Schema
	builders []array.Builder
	widths   []int
	decoders []func(b array.Builder, vals []any) error
	n        int64
}

func newBatcher(s *arrow.Schema) *batcher {
	b := &batcher{schema: s}
	for _, f := range s.Fields() {
		w, dec := FieldDecoder(f.Type)
		b.builders = append(b.builders, array.NewBuilder(memory.DefaultAllocator, f.Type))
		b.widths = append(b.widths, w)
		b.decoders = append(b.decoders, dec)
	}
	return b
}

// add appends one row: the values of the schema's physical columns.
func (b *batcher) add(vals []any) error {
	off := 0
	for i, dec := range b.decoders {
		if err := dec(b.builders[i], vals[off:off+b.widths[i]]); err != nil {
			return fmt.Errorf("column %q: %w", b.schema.Field(i).Name, err)
		}
		off += b.widths[i]
	}
	b.n++
	return nil
}

// yieldTo yields the rows added since the last time as a record batch,
// released once yield returns, and returns what yield did.
func (b *batcher) yieldTo(yield func(arrow.RecordBatch, error) bool) bool {
	rec := b.flush()
	defer rec.Release()
	return yield(rec, nil)
}

// flush returns the rows added since the last flush as a record batch,
// which the caller releases.
func (b *batcher) flush() arrow.RecordBatch {
	cols := make([]arrow.Array, len(b.builders))
	for i, bl := range b.builders {
		cols[i] = bl.NewArray()
	}
	rec := array.NewRecordBatch(b.schema, cols, b.n)
	for _, c := range cols {
		c.Release()
	}
	b.n = 0
	return rec
}

func (b *batcher) release() {
	for _, bl := range b.builders {
		bl.Release()
	}
}
