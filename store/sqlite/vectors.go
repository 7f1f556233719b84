package sqlite

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/float16"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/vecindex"
)

// vectorSet holds the vectors of one column of a managed table at one
// version, in row id order, for exact search and re-ranking. Byte vectors
// (uint8 elements) are kept as bytes too, for hamming distance.
type vectorSet struct {
	dim   int
	f32   *vecindex.Vectors
	bytes *vecindex.ByteVectors // nil unless the elements are uint8
	// visible has bit r set for each row id r in the set.
	visible []uint64
	size    int64
}

func (s *vectorSet) ids() []int64 { return s.f32.IDs }

func (s *vectorSet) cacheBytes() int64 { return s.size }

// has reports whether row id is in the set.
func (s *vectorSet) has(id int64) bool {
	return id >= 0 && int(id>>6) < len(s.visible) && s.visible[id>>6]>>(id&63)&1 != 0
}

// position returns the index of row id in the set, or -1.
func (s *vectorSet) position(id int64) int {
	ids := s.ids()
	lo, hi := 0, len(ids)
	for lo < hi {
		m := (lo + hi) / 2
		if ids[m] < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(ids) && ids[lo] == id {
		return lo
	}
	return -1
}

// vector returns row i's vector.
func (s *vectorSet) vector(i int) []float32 { return s.f32.Data[i*s.dim : (i+1)*s.dim] }

// tail returns the rows with id > after, a suffix of the set.
func (s *vectorSet) tail(after int64) (*vecindex.Vectors, *vecindex.ByteVectors) {
	ids := s.ids()
	i := len(ids)
	for i > 0 && ids[i-1] > after {
		i--
	}
	f := &vecindex.Vectors{Dim: s.dim, Data: s.f32.Data[i*s.dim:], IDs: ids[i:]}
	if s.bytes == nil {
		return f, nil
	}
	return f, &vecindex.ByteVectors{Dim: s.dim, Data: s.bytes.Data[i*s.dim:], IDs: ids[i:]}
}

// loadVectors reads the vectors of field f (stored in physical column col)
// of table t visible at version v.
func loadVectors(ctx context.Context, tx *Tx, t *tableRow, f arrow.Field, col string, v int64) (*vectorSet, error) {
	ft, ok := f.Type.(*arrow.FixedSizeListType)
	if !ok || !store.IsVectorType(f.Type) {
		return nil, store.Errorf(store.CodeInvalidInput, "column %s is not a vector column", f.Name)
	}
	dim := int(ft.Len())
	elem := ft.Elem().ID()
	rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT _rowid, %s FROM %s WHERE %s AND %s IS NOT NULL ORDER BY _rowid`,
		quoteColumn(col), dataTable(t), visibleAt, quoteColumn(col)), v, v)
	if err != nil {
		return nil, internal("load vectors", err)
	}
	defer rows.Close()
	set := &vectorSet{dim: dim, f32: &vecindex.Vectors{Dim: dim}}
	if elem == arrow.UINT8 {
		set.bytes = &vecindex.ByteVectors{Dim: dim}
	}
	var maxID int64
	for rows.Next() {
		var id int64
		var blob []byte
		if err := rows.Scan(&id, &blob); err != nil {
			return nil, internal("load vectors", err)
		}
		if err := appendVectorFloats(set, elem, blob); err != nil {
			return nil, internal("load vectors", err)
		}
		set.f32.IDs = append(set.f32.IDs, id)
		maxID = id
	}
	if err := rows.Err(); err != nil {
		return nil, internal("load vectors", err)
	}
	// Appending left up to half of each array unused: the set stays in
	// the memory cache, so it keeps exact copies.
	set.f32.Data, set.f32.IDs = fit(set.f32.Data), fit(set.f32.IDs)
	if set.bytes != nil {
		set.bytes.Data, set.bytes.IDs = fit(set.bytes.Data), set.f32.IDs
	}
	set.visible = make([]uint64, maxID/64+1)
	for _, id := range set.f32.IDs {
		set.visible[id>>6] |= 1 << (id & 63)
	}
	set.size = int64(cap(set.f32.Data))*4 + int64(cap(set.f32.IDs))*8 + int64(cap(set.visible))*8
	if set.bytes != nil {
		set.size += int64(cap(set.bytes.Data))
	}
	return set, nil
}

// fit returns s, or a copy of it without spare capacity when it has much.
func fit[T any](s []T) []T {
	if cap(s)-len(s) <= len(s)/16 {
		return s
	}
	return slices.Clone(s)
}

// appendVectorFloats decodes one vector BLOB onto the set.
func appendVectorFloats(set *vectorSet, elem arrow.Type, blob []byte) error {
	dim := set.dim
	switch elem {
	case arrow.FLOAT32:
		if len(blob) != 4*dim {
			return fmt.Errorf("vector of %d bytes, want %d", len(blob), 4*dim)
		}
		for j := range dim {
			set.f32.Data = append(set.f32.Data, math.Float32frombits(binary.LittleEndian.Uint32(blob[4*j:])))
		}
	case arrow.FLOAT64:
		if len(blob) != 8*dim {
			return fmt.Errorf("vector of %d bytes, want %d", len(blob), 8*dim)
		}
		for j := range dim {
			set.f32.Data = append(set.f32.Data, float32(math.Float64frombits(binary.LittleEndian.Uint64(blob[8*j:]))))
		}
	case arrow.FLOAT16:
		if len(blob) != 2*dim {
			return fmt.Errorf("vector of %d bytes, want %d", len(blob), 2*dim)
		}
		for j := range dim {
			set.f32.Data = append(set.f32.Data, float16.FromBits(binary.LittleEndian.Uint16(blob[2*j:])).Float32())
		}
	case arrow.UINT8, arrow.INT8:
		if len(blob) != dim {
			return fmt.Errorf("vector of %d bytes, want %d", len(blob), dim)
		}
		for _, b := range blob {
			if elem == arrow.INT8 {
				set.f32.Data = append(set.f32.Data, float32(int8(b)))
			} else {
				set.f32.Data = append(set.f32.Data, float32(b))
			}
		}
		if set.bytes != nil {
			set.bytes.Data = append(set.bytes.Data, blob...)
		}
	default:
		return fmt.Errorf("vectors of %s", elem)
	}
	return nil
}
