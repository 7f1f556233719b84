package table

import (
	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/internal/pb/tablepb"
)

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
