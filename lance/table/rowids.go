package table

import (
	"encoding/binary"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/internal/pb/tablepb"
)

// Datasets with stable row ids give each fragment three sequences of u64
// values, one per physical row: the rows' ids (a RowIdSequence of
// segments) and the versions each row was last updated and created at
// (a RowDatasetVersionSequence of runs, each a segment whose length is the
// number of rows at one version). Decoding is bounded by the fragment's
// row count: a sequence describing more values than the fragment has rows
// is corrupt, whatever its encoding claims.

// encodeRowIDRange returns the serialized row id sequence start, start+1,
// …, start+n-1: the ids a fragment of n new rows gets in a dataset with
// stable row ids.
func encodeRowIDRange(start, n uint64) []byte {
	seq := &tablepb.RowIdSequence{Segments: []*tablepb.U64Segment{rangeSegment(start, start+n)}}
	data, _ := proto.Marshal(seq)
	return data
}

// encodeVersionRun returns the serialized row version sequence of n rows
// all at version v.
func encodeVersionRun(n, v uint64) []byte {
	seq := &tablepb.RowDatasetVersionSequence{Runs: []*tablepb.RowDatasetVersionRun{{Span: rangeSegment(0, n), Version: v}}}
	data, _ := proto.Marshal(seq)
	return data
}

func rangeSegment(start, end uint64) *tablepb.U64Segment {
	return &tablepb.U64Segment{Segment: &tablepb.U64Segment_Range_{Range: &tablepb.U64Segment_Range{Start: start, End: end}}}
}

// encodeU64Sequence returns the serialized row id sequence of ids: one
// range when they are consecutive, else one array (sorted when they are),
// packed in the narrowest offsets from their minimum.
func encodeU64Sequence(ids []uint64) []byte {
	var seg *tablepb.U64Segment
	switch {
	case len(ids) == 0:
		seg = rangeSegment(0, 0)
	case ids[len(ids)-1] >= ids[0] && ids[len(ids)-1]-ids[0] == uint64(len(ids)-1) && slices.IsSorted(ids):
		seg = rangeSegment(ids[0], ids[0]+uint64(len(ids)))
	case slices.IsSorted(ids):
		seg = &tablepb.U64Segment{Segment: &tablepb.U64Segment_SortedArray{SortedArray: packU64s(ids)}}
	default:
		seg = &tablepb.U64Segment{Segment: &tablepb.U64Segment_Array{Array: packU64s(ids)}}
	}
	data, _ := proto.Marshal(&tablepb.RowIdSequence{Segments: []*tablepb.U64Segment{seg}})
	return data
}

// packU64s packs vs as offsets from their minimum in 16 or 32 bits when
// they fit, else as plain u64s.
func packU64s(vs []uint64) *tablepb.EncodedU64Array {
	lo, hi := slices.Min(vs), slices.Max(vs)
	switch {
	case hi-lo <= 0xffff:
		b := make([]byte, 0, 2*len(vs))
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint16(b, uint16(v-lo))
		}
		return &tablepb.EncodedU64Array{Array: &tablepb.EncodedU64Array_U16Array_{U16Array: &tablepb.EncodedU64Array_U16Array{Base: lo, Offsets: b}}}
	case hi-lo <= 0xffffffff:
		b := make([]byte, 0, 4*len(vs))
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint32(b, uint32(v-lo))
		}
		return &tablepb.EncodedU64Array{Array: &tablepb.EncodedU64Array_U32Array_{U32Array: &tablepb.EncodedU64Array_U32Array{Base: lo, Offsets: b}}}
	}
	b := make([]byte, 0, 8*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return &tablepb.EncodedU64Array{Array: &tablepb.EncodedU64Array_U64Array_{U64Array: &tablepb.EncodedU64Array_U64Array{Values: b}}}
}

// encodeVersionSequence returns the serialized row version sequence of
// versions (one per row), as runs of equal versions.
func encodeVersionSequence(versions []uint64) []byte {
	seq := &tablepb.RowDatasetVersionSequence{}
	for i := 0; i < len(versions); {
		j := i + 1
		for j < len(versions) && versions[j] == versions[i] {
			j++
		}
		seq.Runs = append(seq.Runs, &tablepb.RowDatasetVersionRun{Span: rangeSegment(uint64(i), uint64(j)), Version: versions[i]})
		i = j
	}
	data, _ := proto.Marshal(seq)
	return data
}

// decodeRowIDs returns the n row ids of a fragment of n rows from its
// serialized sequence, or an error wrapping ErrCorrupt.
func decodeRowIDs(data []byte, n uint64) ([]uint64, error) {
	var seq tablepb.RowIdSequence
	if err := proto.Unmarshal(data, &seq); err != nil {
		return nil, corruptf("row id sequence: %v", err)
	}
	out := make([]uint64, 0, min(n, 1<<16))
	for _, seg := range seq.GetSegments() {
		var err error
		if out, err = appendSegment(out, seg, n); err != nil {
			return nil, err
		}
	}
	if uint64(len(out)) != n {
		return nil, corruptf("row id sequence of %d values for %d rows", len(out), n)
	}
	return out, nil
}

// decodeVersions returns the versions of a fragment's n rows from a
// serialized version sequence, or an error wrapping ErrCorrupt.
func decodeVersions(data []byte, n uint64) ([]uint64, error) {
	var seq tablepb.RowDatasetVersionSequence
	if err := proto.Unmarshal(data, &seq); err != nil {
		return nil, corruptf("row version sequence: %v", err)
	}
	out := make([]uint64, 0, min(n, 1<<16))
	for _, run := range seq.GetRuns() {
		count, err := segmentLen(run.GetSpan())
		if err != nil {
			return nil, err
		}
		if count > n-uint64(len(out)) {
			return nil, corruptf("row version sequence has more than %d rows", n)
		}
		for range count {
			out = append(out, run.GetVersion())
		}
	}
	if uint64(len(out)) != n {
		return nil, corruptf("row version sequence of %d rows for %d", len(out), n)
	}
	return out, nil
}

// segmentLen returns the number of values of seg without expanding it.
func segmentLen(seg *tablepb.U64Segment) (uint64, error) {
	switch s := seg.GetSegment().(type) {
	case *tablepb.U64Segment_Range_:
		if s.Range.GetEnd() < s.Range.GetStart() {
			return 0, corruptf("row sequence range ends before it starts")
		}
		return s.Range.GetEnd() - s.Range.GetStart(), nil
	case *tablepb.U64Segment_RangeWithHoles_:
		start, end := s.RangeWithHoles.GetStart(), s.RangeWithHoles.GetEnd()
		holes, err := arrayLen(s.RangeWithHoles.GetHoles())
		if err != nil || end < start || holes > end-start {
			return 0, corruptf("row sequence range with holes is malformed")
		}
		return end - start - holes, nil
	case *tablepb.U64Segment_RangeWithBitmap_:
		start, end := s.RangeWithBitmap.GetStart(), s.RangeWithBitmap.GetEnd()
		bits := s.RangeWithBitmap.GetBitmap()
		if end < start || (end-start+7)/8 > uint64(len(bits)) {
			return 0, corruptf("row sequence bitmap does not cover its range")
		}
		var n uint64
		for i := range end - start {
			n += uint64(bits[i/8] >> (i % 8) & 1)
		}
		return n, nil
	case *tablepb.U64Segment_SortedArray:
		return arrayLen(s.SortedArray)
	case *tablepb.U64Segment_Array:
		return arrayLen(s.Array)
	}
	return 0, corruptf("row sequence segment of an unknown kind")
}

// appendSegment appends the values of seg to out, refusing to go past
// limit values in all.
func appendSegment(out []uint64, seg *tablepb.U64Segment, limit uint64) ([]uint64, error) {
	room := limit - uint64(len(out))
	over := func() ([]uint64, error) { return nil, corruptf("row sequence has more than %d values", limit) }
	switch s := seg.GetSegment().(type) {
	case *tablepb.U64Segment_Range_:
		start, end := s.Range.GetStart(), s.Range.GetEnd()
		if end < start {
			return nil, corruptf("row sequence range ends before it starts")
		}
		if end-start > room {
			return over()
		}
		for v := start; v < end; v++ {
			out = append(out, v)
		}
	case *tablepb.U64Segment_RangeWithHoles_:
		start, end := s.RangeWithHoles.GetStart(), s.RangeWithHoles.GetEnd()
		if end < start {
			return nil, corruptf("row sequence range ends before it starts")
		}
		holes, err := unpackU64s(s.RangeWithHoles.GetHoles(), end-start)
		if err != nil {
			return nil, err
		}
		if end-start-min(uint64(len(holes)), end-start) > room {
			return over()
		}
		slices.Sort(holes)
		for v := start; v < end; v++ {
			if _, hole := slices.BinarySearch(holes, v); !hole {
				out = append(out, v)
			}
		}
	case *tablepb.U64Segment_RangeWithBitmap_:
		start, end := s.RangeWithBitmap.GetStart(), s.RangeWithBitmap.GetEnd()
		bits := s.RangeWithBitmap.GetBitmap()
		if end < start || (end-start+7)/8 > uint64(len(bits)) {
			return nil, corruptf("row sequence bitmap does not cover its range")
		}
		for i := range end - start {
			if bits[i/8]&(1<<(i%8)) != 0 {
				if room == 0 {
					return over()
				}
				room--
				out = append(out, start+i)
			}
		}
	case *tablepb.U64Segment_SortedArray:
		vs, err := unpackU64s(s.SortedArray, room)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	case *tablepb.U64Segment_Array:
		vs, err := unpackU64s(s.Array, room)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	default:
		return nil, corruptf("row sequence segment of an unknown kind")
	}
	return out, nil
}

// arrayLen returns the number of values a packed array holds.
func arrayLen(a *tablepb.EncodedU64Array) (uint64, error) {
	switch x := a.GetArray().(type) {
	case *tablepb.EncodedU64Array_U16Array_:
		return uint64(len(x.U16Array.GetOffsets()) / 2), nil
	case *tablepb.EncodedU64Array_U32Array_:
		return uint64(len(x.U32Array.GetOffsets()) / 4), nil
	case *tablepb.EncodedU64Array_U64Array_:
		return uint64(len(x.U64Array.GetValues()) / 8), nil
	}
	return 0, corruptf("packed u64 array of an unknown kind")
}

// unpackU64s returns the values of a packed array, at most limit of them.
func unpackU64s(a *tablepb.EncodedU64Array, limit uint64) ([]uint64, error) {
	n, err := arrayLen(a)
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, corruptf("packed u64 array of %d values where at most %d fit", n, limit)
	}
	out := make([]uint64, n)
	switch x := a.GetArray().(type) {
	case *tablepb.EncodedU64Array_U16Array_:
		b := x.U16Array.GetOffsets()
		for i := range out {
			out[i] = x.U16Array.GetBase() + uint64(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case *tablepb.EncodedU64Array_U32Array_:
		b := x.U32Array.GetOffsets()
		for i := range out {
			out[i] = x.U32Array.GetBase() + uint64(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case *tablepb.EncodedU64Array_U64Array_:
		b := x.U64Array.GetValues()
		for i := range out {
			out[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
	}
	return out, nil
}
