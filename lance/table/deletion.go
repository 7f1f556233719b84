package table

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/internal/arrowin"
	"github.com/lancens/lancens/lance/blob"
)

// DeletionKind is the format of a deletion file. Its values are those of
// the format's DeletionFileType.
type DeletionKind int32

const (
	// DeletionArrow is an Arrow IPC file of one uint32 column of deleted
	// row offsets (".arrow"); Lance writes it for few deletions.
	DeletionArrow DeletionKind = 0
	// DeletionBitmap is a serialized 32-bit roaring bitmap of deleted row
	// offsets (".bin"); Lance writes it for many.
	DeletionBitmap DeletionKind = 1
)

// Ext returns the file name extension of the kind, without the dot.
func (k DeletionKind) Ext() string {
	if k == DeletionBitmap {
		return "bin"
	}
	return "arrow"
}

// bitmapDeletionsFrom is the number of deleted rows from which a deletion
// file is written as a bitmap, as Lance does: a set of fewer offsets is
// smaller as a flat array.
const bitmapDeletionsFrom = 5000

// maxDeletionFileBytes bounds the deletion file of a fragment of n
// physical rows: four bytes per row (an Arrow array of every offset) plus
// room for the format's framing. A roaring bitmap of n rows is smaller.
func maxDeletionFileBytes(physicalRows uint64) int64 {
	return 64<<10 + 4*int64(min(physicalRows, 1<<32))
}

// deletionSchema is the schema of Arrow deletion files.
var deletionSchema = arrow.NewSchema([]arrow.Field{{Name: "row_id", Type: arrow.PrimitiveTypes.Uint32}}, nil)

// EncodeDeletions returns the deletion file of the row offsets in rows and
// its kind: an Arrow file for fewer than 5,000 rows, a roaring bitmap
// otherwise. It returns an error only when Arrow's writer fails.
func EncodeDeletions(rows *roaring.Bitmap) (DeletionKind, []byte, error) {
	if rows.GetCardinality() >= bitmapDeletionsFrom {
		bm := rows.Clone()
		bm.RunOptimize()
		data, err := bm.ToBytes()
		return DeletionBitmap, data, err
	}
	b := array.NewUint32Builder(memory.NewGoAllocator())
	defer b.Release()
	b.AppendValues(rows.ToArray(), nil)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(deletionSchema, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(deletionSchema), ipc.WithZstd())
	if err != nil {
		return 0, nil, err
	}
	if err := w.Write(rec); err != nil {
		return 0, nil, err
	}
	if err := w.Close(); err != nil {
		return 0, nil, err
	}
	return DeletionArrow, buf.Bytes(), nil
}

// DecodeDeletions returns the row offsets a deletion file of the given
// kind holds, each of which must be below physicalRows (the fragment's).
// It returns an error wrapping ErrCorrupt when data is not a well-formed
// file of the kind, holds an offset out of range, or is larger than a
// file for physicalRows rows can be; and one wrapping ErrUnsupported for
// an unknown kind.
func DecodeDeletions(kind DeletionKind, data []byte, physicalRows uint64) (*roaring.Bitmap, error) {
	if int64(len(data)) > maxDeletionFileBytes(physicalRows) {
		return nil, corruptf("deletion file of %d bytes for a fragment of %d rows", len(data), physicalRows)
	}
	var rows *roaring.Bitmap
	var err error
	switch kind {
	case DeletionArrow:
		rows, err = decodeArrowDeletions(data, physicalRows)
	case DeletionBitmap:
		rows, err = decodeBitmapDeletions(data)
	default:
		return nil, unsupportedf("deletion file kind %d", kind)
	}
	if err != nil {
		return nil, err
	}
	if !rows.IsEmpty() && uint64(rows.Maximum()) >= physicalRows {
		return nil, corruptf("deletion file deletes row %d of a fragment of %d rows", rows.Maximum(), physicalRows)
	}
	return rows, nil
}

// arrowFileMagic starts and ends an Arrow IPC file; the stream of its
// messages follows the first one, padded with zeros to an alignment of at
// least eight bytes (Lance's writer pads to 64).
const arrowFileMagic = "ARROW1"

// decodeArrowDeletions reads an Arrow deletion file: the IPC stream
// embedded in the file goes through the hardened stream decoder (the
// footer, which only repeats where the messages are, is not needed).
func decodeArrowDeletions(data []byte, physicalRows uint64) (*roaring.Bitmap, error) {
	if len(data) < 2*8 || string(data[:6]) != arrowFileMagic || string(data[len(data)-6:]) != arrowFileMagic {
		return nil, corruptf("deletion file is not an Arrow IPC file")
	}
	start := 8
	for start+8 <= len(data) && binary.LittleEndian.Uint64(data[start:]) == 0 {
		start += 8
	}
	limit := int64(len(data))
	rd, err := arrowin.NewReader(bytes.NewReader(data[start:]), arrowin.Limits{
		MaxBodyBytes:    limit,
		MaxDecodedBytes: 64<<10 + 4*int64(min(physicalRows, 1<<32)),
		MaxRows:         int64(min(physicalRows, 1<<32)),
	})
	if err != nil {
		return nil, corruptf("Arrow deletion file: %v", err)
	}
	defer rd.Close()
	var batches []arrow.RecordBatch
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	for {
		b, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, corruptf("Arrow deletion file: %v", err)
		}
		batches = append(batches, b)
	}
	if rd.Schema().NumFields() != 1 {
		return nil, corruptf("Arrow deletion file has %d columns, want 1", rd.Schema().NumFields())
	}
	rows := roaring.New()
	for _, b := range batches {
		switch col := b.Column(0).(type) {
		case *array.Uint32:
			if col.NullN() > 0 {
				return nil, corruptf("Arrow deletion file holds nulls")
			}
			rows.AddMany(col.Uint32Values())
		case *array.Int32:
			if col.NullN() > 0 {
				return nil, corruptf("Arrow deletion file holds nulls")
			}
			for _, v := range col.Int32Values() {
				if v < 0 {
					return nil, corruptf("Arrow deletion file deletes row %d", v)
				}
				rows.Add(uint32(v))
			}
		default:
			return nil, corruptf("Arrow deletion file column is %s, want uint32", col.DataType())
		}
	}
	return rows, nil
}

// decodeBitmapDeletions reads a roaring bitmap deletion file, which must
// be exactly one serialized bitmap, internally consistent.
func decodeBitmapDeletions(data []byte) (*roaring.Bitmap, error) {
	rows := roaring.New()
	n, err := rows.ReadFrom(bytes.NewReader(data))
	if err != nil {
		return nil, corruptf("bitmap deletion file: %v", err)
	}
	if n != int64(len(data)) {
		return nil, corruptf("bitmap deletion file has %d bytes after its bitmap", int64(len(data))-n)
	}
	if err := rows.Validate(); err != nil {
		return nil, corruptf("bitmap deletion file: %v", err)
	}
	return rows, nil
}

// deletionsDir is the directory of deletion files below a dataset root.
const deletionsDir = "_deletions/"

// deletionName returns the name of a fragment's deletion file.
func deletionName(fragmentID uint64, d *DeletionFile) string {
	return fmt.Sprintf("%d-%d-%d.%s", fragmentID, d.ReadVersion, d.ID, d.Kind.Ext())
}

// readDeletionFile reads and decodes fragment f's deletion file, at p in
// s. It returns an error wrapping blob.ErrNotFound for a missing file and
// the errors of DecodeDeletions.
func readDeletionFile(ctx context.Context, s blob.Store, p string, f *Fragment) (*roaring.Bitmap, error) {
	d := f.Deletion
	data, err := blob.ReadAll(ctx, s, p, maxDeletionFileBytes(f.PhysicalRows))
	if err != nil {
		return nil, fmt.Errorf("deletion file %s: %w", p, err)
	}
	rows, err := DecodeDeletions(d.Kind, data, f.PhysicalRows)
	if err != nil {
		return nil, fmt.Errorf("deletion file %s: %w", p, err)
	}
	if rows.GetCardinality() != d.NumDeleted && d.NumDeleted != 0 {
		return nil, corruptf("deletion file %s deletes %d rows, the manifest says %d", p, rows.GetCardinality(), d.NumDeleted)
	}
	return rows, nil
}
