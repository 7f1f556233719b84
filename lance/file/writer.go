package file

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/file/internal/v20"
	"github.com/lancens/lancens/lance/file/internal/v21"
	"github.com/lancens/lancens/lance/internal/pb/filepb"
	"github.com/lancens/lancens/lance/internal/pb/schemapb"
	"github.com/lancens/lancens/lance/internal/schemaproto"
	"github.com/lancens/lancens/lance/schema"
)

// WriteOptions choose how a file is written. Zero fields take their
// defaults.
type WriteOptions struct {
	// Version is the format version to write: V2_0 (the default), V2_1 or
	// V2_2 (what Lance 12 writes by default; a dataset keeps the version
	// it was created with, so appends to it must match).
	Version Version
	// PageBytes is the size at which a column's buffered values become a
	// page (default 8 MiB, Lance's own). A writer holds about this much per
	// column.
	PageBytes int64
}

const (
	defaultPageBytes = 8 << 20
	// bufferAlignment is the alignment of every page buffer in the file.
	bufferAlignment = 64
)

// Written describes a finished file, with what a dataset's manifest
// records of it.
type Written struct {
	Rows    uint64
	Size    int64
	Version Version
	// FieldIDs and ColumnIndices pair each field that owns a column with
	// that column, in column order (a manifest's DataFile.fields and
	// column_indices).
	FieldIDs      []int32
	ColumnIndices []int32
}

// Writer writes one data file, streaming: each column's values are
// encoded into pages as they arrive and a page is written once it fills,
// so memory stays near WriteOptions.PageBytes per column whatever the
// file's size. The file appears only when Close succeeds. A Writer is not
// safe for concurrent use.
type Writer struct {
	obj     blob.Writer
	out     *bufio.Writer
	pos     uint64
	schema  *schema.Schema
	version Version
	enc     encoding.Encoder
	columns []*filepb.ColumnMetadata
	rows    uint64
	err     error // the first error; the writer is then unusable
	done    bool
}

// Create starts writing a data file at path in store for rows of s, whose
// fields carry their ids (a dataset's schema, or s.AssignIDs). It returns
// an error wrapping ErrUnsupported for a version or type this package
// cannot write, schema.ErrInvalid for an invalid schema, or the store's
// error.
func Create(ctx context.Context, store blob.Store, path string, s *schema.Schema, opts *WriteOptions) (*Writer, error) {
	o := WriteOptions{Version: V2_0, PageBytes: defaultPageBytes}
	if opts != nil {
		if opts.Version != (Version{}) {
			o.Version = opts.Version
		}
		if opts.PageBytes > 0 {
			o.PageBytes = opts.PageBytes
		}
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	var enc encoding.Encoder
	var err error
	switch o.Version {
	case V2_0:
		enc, err = v20.NewEncoder(s, uint64(o.PageBytes))
	case V2_1, V2_2:
		enc, err = v21.NewEncoder(s, uint64(o.PageBytes), o.Version == V2_2)
	default:
		return nil, encoding.Unsupportedf("writing format version %s", o.Version)
	}
	if err != nil {
		return nil, err
	}
	obj, err := store.Create(ctx, path)
	if err != nil {
		return nil, err
	}
	w := &Writer{
		obj:     obj,
		out:     bufio.NewWriterSize(obj, 1<<20),
		schema:  s.Clone(),
		version: o.Version,
		enc:     enc,
		columns: make([]*filepb.ColumnMetadata, enc.NumColumns()),
	}
	for i := range w.columns {
		w.columns[i] = &filepb.ColumnMetadata{}
	}
	return w, nil
}

// Write adds the rows of rec, whose columns are matched to the schema's
// top-level fields by name (extra columns are refused). Types must be the
// schema's (an extension type counts as its storage type); a
// non-nullable field must hold no nulls, at any depth; and format 2.0
// cannot store null structs. It returns an error wrapping
// schema.ErrInvalid or ErrUnsupported for such input (the writer stays
// usable), or the store's error (the writer is then broken: Abort it).
func (w *Writer) Write(rec arrow.RecordBatch) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return errors.New("lance file writer: write after Close")
	}
	cols, err := w.columnsOf(rec)
	if err != nil {
		return err
	}
	pages, err := w.enc.Append(cols, w.rows)
	if err != nil {
		w.err = err // the encoder may hold part of the batch
		return err
	}
	w.rows += uint64(rec.NumRows())
	return w.writePages(pages)
}

// columnsOf returns rec's arrays in the schema's order, after checking
// them.
func (w *Writer) columnsOf(rec arrow.RecordBatch) ([]arrow.Array, error) {
	if int(rec.NumCols()) != len(w.schema.Fields) {
		return nil, fmt.Errorf("%w: the batch has %d columns, the file's schema %d fields", schema.ErrInvalid, rec.NumCols(), len(w.schema.Fields))
	}
	cols := make([]arrow.Array, len(w.schema.Fields))
	for i, f := range w.schema.Fields {
		idx := rec.Schema().FieldIndices(f.Name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("%w: the batch has %d columns named %s, not one", schema.ErrInvalid, len(idx), f.Name)
		}
		af := rec.Schema().Field(idx[0])
		got, err := schema.FieldFromArrow(af)
		if err != nil {
			return nil, err
		}
		if err := sameShape(f, got, f.Name); err != nil {
			return nil, err
		}
		arr := storage(rec.Column(idx[0]))
		if err := checkNulls(f, arr, f.Name, w.version); err != nil {
			return nil, err
		}
		cols[i] = arr
	}
	return cols, nil
}

// sameShape checks that got (from a batch) has want's type, field by
// field.
func sameShape(want, got *schema.Field, path string) error {
	if want.LogicalType != got.LogicalType || len(want.Children) != len(got.Children) {
		return fmt.Errorf("%w: column %s is %s, the file's schema says %s", schema.ErrInvalid, path, got.LogicalType, want.LogicalType)
	}
	for i, c := range want.Children {
		if got.Children[i].Name != c.Name && !want.IsList() {
			return fmt.Errorf("%w: field %d of %s is %s, the file's schema says %s", schema.ErrInvalid, i, path, got.Children[i].Name, c.Name)
		}
		if err := sameShape(c, got.Children[i], path+"."+c.Name); err != nil {
			return err
		}
	}
	return nil
}

// storage returns the storage array of an extension array, or arr.
func storage(arr arrow.Array) arrow.Array {
	if ext, ok := arr.(array.ExtensionArray); ok {
		return ext.Storage()
	}
	return arr
}

// checkNulls refuses nulls in non-nullable fields (at any depth, as Lance
// does), and null structs in format 2.0, which cannot store them.
func checkNulls(f *schema.Field, arr arrow.Array, path string, v Version) error {
	if !f.Nullable && arr.NullN() > 0 {
		return fmt.Errorf("%w: non-nullable field %s holds %d nulls", schema.ErrInvalid, path, arr.NullN())
	}
	switch a := arr.(type) {
	case *array.Struct:
		if a.NullN() > 0 && v == V2_0 {
			return encoding.Unsupportedf("struct field %s holds %d nulls, and format 2.0 has no struct validity", path, a.NullN())
		}
		for i, c := range f.Children {
			if err := checkNulls(c, storage(a.Field(i)), path+"."+c.Name, v); err != nil {
				return err
			}
		}
	case array.ListLike:
		if len(f.Children) == 1 {
			return checkNulls(f.Children[0], storage(a.ListValues()), path+"."+f.Children[0].Name, v)
		}
	}
	return nil
}

// write appends b to the file, failing the writer on error.
func (w *Writer) write(b []byte) error {
	if _, err := w.out.Write(b); err != nil {
		w.err = err
		return err
	}
	w.pos += uint64(len(b))
	return nil
}

var padding [bufferAlignment]byte

func (w *Writer) writePages(pages []encoding.EncodedPage) error {
	for _, p := range pages {
		page := &filepb.ColumnMetadata_Page{
			Length:   p.Length,
			Priority: p.Priority,
			Encoding: directEncoding(p.Encoding),
		}
		for _, b := range p.Buffers {
			page.BufferOffsets = append(page.BufferOffsets, w.pos)
			page.BufferSizes = append(page.BufferSizes, uint64(len(b)))
			if err := w.write(b); err != nil {
				return err
			}
			if pad := (bufferAlignment - w.pos%bufferAlignment) % bufferAlignment; pad > 0 {
				if err := w.write(padding[:pad]); err != nil {
					return err
				}
			}
		}
		w.columns[p.Column].Pages = append(w.columns[p.Column].Pages, page)
	}
	return nil
}

func directEncoding(any []byte) *filepb.Encoding {
	return &filepb.Encoding{Location: &filepb.Encoding_Direct{Direct: &filepb.DirectEncoding{Encoding: any}}}
}

// Close writes the last pages, the schema, the column metadata and the
// footer, and makes the file visible. It returns what a manifest needs of
// the file, or the first error of writing it (the file then does not
// appear; Abort cleans up).
func (w *Writer) Close() (Written, error) {
	if w.err != nil {
		return Written{}, w.err
	}
	if w.done {
		return Written{}, errors.New("lance file writer: Close after Close")
	}
	w.done = true
	pages, err := w.enc.Finish()
	if err != nil {
		w.err = err
		return Written{}, err
	}
	if err := w.writePages(pages); err != nil {
		return Written{}, err
	}
	fields, md := schemaproto.ToProto(w.schema)
	desc, err := proto.Marshal(&schemapb.FileDescriptor{Schema: &schemapb.Schema{Fields: fields, Metadata: md}, Length: w.rows})
	if err != nil {
		return Written{}, err
	}
	globals := []encoding.Range{{Offset: w.pos, Length: uint64(len(desc))}}
	if err := w.write(desc); err != nil {
		return Written{}, err
	}
	columnMetaStart := w.pos
	var columnMeta []encoding.Range
	for i, c := range w.columns {
		c.Encoding = directEncoding(w.enc.ColumnEncoding(i))
		b, err := proto.Marshal(c)
		if err != nil {
			return Written{}, err
		}
		columnMeta = append(columnMeta, encoding.Range{Offset: w.pos, Length: uint64(len(b))})
		if err := w.write(b); err != nil {
			return Written{}, err
		}
	}
	columnTable := w.pos
	if err := w.write(offsetTable(columnMeta)); err != nil {
		return Written{}, err
	}
	globalTable := w.pos
	if err := w.write(offsetTable(globals)); err != nil {
		return Written{}, err
	}
	footer := make([]byte, footerSize)
	le := binary.LittleEndian
	le.PutUint64(footer[0:], columnMetaStart)
	le.PutUint64(footer[8:], columnTable)
	le.PutUint64(footer[16:], globalTable)
	le.PutUint32(footer[24:], uint32(len(globals)))
	le.PutUint32(footer[28:], uint32(len(w.columns)))
	major, minor := w.version.footerVersion()
	le.PutUint16(footer[32:], major)
	le.PutUint16(footer[34:], minor)
	copy(footer[36:], magic)
	if err := w.write(footer); err != nil {
		return Written{}, err
	}
	if err := w.out.Flush(); err != nil {
		w.err = err
		return Written{}, err
	}
	if err := w.obj.Close(); err != nil {
		w.err = err
		return Written{}, err
	}
	res := Written{Rows: w.rows, Size: int64(w.pos), Version: w.version, FieldIDs: w.enc.FieldIDs()}
	for i := range res.FieldIDs {
		res.ColumnIndices = append(res.ColumnIndices, int32(i))
	}
	return res, nil
}

func offsetTable(rs []encoding.Range) []byte {
	b := make([]byte, 16*len(rs))
	for i, r := range rs {
		binary.LittleEndian.PutUint64(b[16*i:], r.Offset)
		binary.LittleEndian.PutUint64(b[16*i+8:], r.Length)
	}
	return b
}

// Abort discards the file. It is safe after Close (it then does nothing)
// and returns the store's error of discarding it.
func (w *Writer) Abort() error {
	w.done = true
	if w.err == nil {
		w.err = errors.New("lance file writer: aborted")
	}
	return w.obj.Abort()
}
