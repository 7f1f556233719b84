// Package v20 decodes Lance data files of format version 2.0: every field
// has a column of its own (in pre-order: a struct's column, holding
// nothing, before its fields' columns; a list's column of offsets before
// its items' columns), and a page's encoding is a tree of
// lance.encodings.ArrayEncoding messages (nullable wrappers with validity
// bitmaps, flat fixed-width values, fixed-size lists, binary offsets and
// bytes, dictionaries of strings, optionally zstd or lz4 compressed
// buffers). A list's column stores one offset per list, relative to the
// page (see List in lance/proto/encodings_v2_0.proto); its items' columns
// count items, not rows, so list pages and item pages do not line up.
// Format 2.0 has no struct validity: Lance refuses to write null structs
// to it.
//
// Reads fetch only the pages a row range touches and, within a page, only
// the bytes of the values wanted (a binary value's neighbouring offset
// included), except for compressed buffers, which are read whole.
package v20

import (
	"context"
	"slices"
	"sort"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/enc20pb"
	"github.com/lancens/lancens/lance/schema"
)

// Decoder decodes format 2.0 files. It has no state of its own: parsed
// page encodings are kept on each column (encoding.Column.Memo).
type Decoder struct{}

var _ encoding.Decoder = Decoder{}

// packed reports whether a struct field is stored packed in one column,
// by the rule Lance's 2.0 writer applies to its metadata.
func packed(f *schema.Field) bool {
	if v, ok := f.Metadata["packed"]; ok {
		return v == "true"
	}
	_, ok := f.Metadata["lance-encoding:packed"]
	return ok
}

// Columns implements encoding.Decoder: every field owns a column, in
// pre-order, except the fields inside a packed struct.
func (Decoder) Columns(s *schema.Schema, numColumns int) (map[int32]int, error) {
	out := map[int32]int{}
	var assign func(f *schema.Field)
	assign = func(f *schema.Field) {
		out[f.ID] = len(out)
		if f.IsStruct() && packed(f) {
			return
		}
		for _, c := range f.Children {
			assign(c)
		}
	}
	for _, f := range s.Fields {
		assign(f)
	}
	if len(out) != numColumns {
		return nil, encoding.Corruptf("the schema's fields need %d columns, the file has %d", len(out), numColumns)
	}
	return out, nil
}

// Decode implements encoding.Decoder.
func (Decoder) Decode(ctx context.Context, req *encoding.Request) (arrow.Array, error) {
	spans := make([]span, len(req.Ranges))
	for i, r := range req.Ranges {
		spans[i] = span{r.Start, r.End}
	}
	d := &fieldDecoder{ctx: ctx, req: req}
	data, err := d.field(req.Field, req.Type, spans, 0)
	if err != nil {
		return nil, err
	}
	defer data.Release()
	return array.MakeFromData(data), nil
}

type fieldDecoder struct {
	ctx context.Context
	req *encoding.Request
}

// column returns the column of field f.
func (d *fieldDecoder) column(f *schema.Field) (*encoding.Column, error) {
	c := d.req.Columns[f.ID]
	if c == nil {
		return nil, encoding.Corruptf("field %s (id %d) has no column", f.Name, f.ID)
	}
	return c, nil
}

// field returns the values at spans (sorted, disjoint, non-empty; rows
// for a top-level field, items for a list's items) of field f as data of
// type dt.
func (d *fieldDecoder) field(f *schema.Field, dt arrow.DataType, spans []span, depth int) (arrow.ArrayData, error) {
	if depth > schema.MaxDepth {
		return nil, encoding.Corruptf("fields nest more than %d deep", schema.MaxDepth)
	}
	switch {
	case f.IsStruct() && packed(f):
		return d.packedStruct(f, dt, spans)
	case f.IsStruct():
		return d.structField(f, dt, spans, depth)
	case f.IsList():
		return d.listField(f, dt, spans, depth)
	}
	if dt.ID() == arrow.DICTIONARY {
		return nil, encoding.Unsupportedf("reading dictionary-typed field %s", f.Name)
	}
	col, err := d.column(f)
	if err != nil {
		return nil, err
	}
	if err := checkValuesColumn(col); err != nil {
		return nil, err
	}
	return d.pages(col, dt, spans)
}

// checkValuesColumn refuses columns whose column encoding is not plain
// values (blob columns hold descriptions, not the values).
func checkValuesColumn(col *encoding.Column) error {
	if col.EncodingType == "" {
		return nil
	}
	var ce enc20pb.ColumnEncoding
	if err := unmarshalAny(col.EncodingType, col.Encoding, "/lance.encodings.ColumnEncoding", &ce); err != nil {
		return err
	}
	switch ce.GetColumnEncoding().(type) {
	case *enc20pb.ColumnEncoding_Values, nil:
		return nil
	}
	return encoding.Unsupportedf("the column encoding %T", ce.GetColumnEncoding())
}

// packedStruct decodes a struct stored packed in its own column.
func (d *fieldDecoder) packedStruct(f *schema.Field, dt arrow.DataType, spans []span) (arrow.ArrayData, error) {
	col, err := d.column(f)
	if err != nil {
		return nil, err
	}
	if err := checkValuesColumn(col); err != nil {
		return nil, err
	}
	if len(f.Children) != dt.(*arrow.StructType).NumFields() {
		return nil, encoding.Corruptf("packed struct field %s read as %s", f.Name, dt)
	}
	return d.pages(col, dt, spans)
}

func (d *fieldDecoder) structField(f *schema.Field, dt arrow.DataType, spans []span, depth int) (arrow.ArrayData, error) {
	t, ok := dt.(*arrow.StructType)
	if !ok || t.NumFields() != len(f.Children) {
		return nil, encoding.Corruptf("struct field %s read as %s", f.Name, dt)
	}
	children := make([]arrow.ArrayData, len(f.Children))
	defer func() {
		for _, c := range children {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, c := range f.Children {
		cd, err := d.field(c, t.Field(i).Type, spans, depth+1)
		if err != nil {
			return nil, err
		}
		children[i] = cd
	}
	return array.NewData(dt, int(total(spans)), []*memory.Buffer{nil}, children, 0, 0), nil
}

// pageEncodings returns the parsed encodings of a column's pages.
func pageEncodings(col *encoding.Column) ([]*enc20pb.ArrayEncoding, error) {
	v, err := col.Memo(func() (any, error) {
		encs := make([]*enc20pb.ArrayEncoding, len(col.Pages))
		for i := range col.Pages {
			if col.Pages[i].Length == 0 {
				continue
			}
			e, err := parseArrayEncoding(&col.Pages[i])
			if err != nil {
				return nil, err
			}
			encs[i] = e
		}
		return encs, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]*enc20pb.ArrayEncoding), nil
}

// forPages calls fn for each page of col that spans touch (page index i
// and the spans within it, page-relative), in order.
func forPages(col *encoding.Column, spans []span, fn func(i int, local []span) error) error {
	if last := spans[len(spans)-1].end; last > col.Rows() {
		return encoding.Corruptf("column %d holds %d values, not the %d its field needs", col.Index, col.Rows(), last)
	}
	i := 0 // the page holding start
	si := 0
	start, end := spans[0].start, spans[0].end
	var local []span
	for si < len(spans) {
		i += sort.Search(len(col.Pages)-i, func(k int) bool {
			pg := &col.Pages[i+k]
			return pg.First+pg.Length > start
		})
		pg := &col.Pages[i]
		pageEnd := pg.First + pg.Length
		local = local[:0]
		for {
			local = append(local, span{start - pg.First, min(end, pageEnd) - pg.First})
			if end > pageEnd {
				start = pageEnd // the rest is in the next pages
				break
			}
			if si++; si == len(spans) {
				break
			}
			start, end = spans[si].start, spans[si].end
			if start >= pageEnd {
				break
			}
		}
		if err := fn(i, local); err != nil {
			return err
		}
	}
	return nil
}

// maxParallelPages bounds how many pages of one column a read decodes at
// once: a take of scattered rows touches many pages, and their reads then
// overlap (on object storage, or a local file not in the page cache).
const maxParallelPages = 8

// pages decodes spans of a column of values page by page, several pages at
// once, and concatenates the results in order.
func (d *fieldDecoder) pages(col *encoding.Column, dt arrow.DataType, spans []span) (arrow.ArrayData, error) {
	encs, err := pageEncodings(col)
	if err != nil {
		return nil, err
	}
	type task struct {
		page  int
		local []span
	}
	var tasks []task
	err = forPages(col, spans, func(i int, local []span) error {
		tasks = append(tasks, task{i, slices.Clone(local)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	parts := make([]arrow.Array, len(tasks))
	errs := make([]error, len(tasks))
	defer func() {
		for _, p := range parts {
			if p != nil {
				p.Release()
			}
		}
	}()
	decode := func(k int) {
		t := tasks[k]
		p := &page{ctx: d.ctx, req: d.req, col: col, info: &col.Pages[t.page]}
		data, err := p.decode(encs[t.page], dt, t.local, 0)
		if err != nil {
			errs[k] = err
			return
		}
		parts[k] = array.MakeFromData(data)
		data.Release()
	}
	if len(tasks) == 1 {
		decode(0)
	} else {
		sem := make(chan struct{}, maxParallelPages)
		var wg sync.WaitGroup
		for k := range tasks {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				decode(k)
			})
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return d.concat(parts, dt)
}

// concat returns the data of parts joined.
func (d *fieldDecoder) concat(parts []arrow.Array, dt arrow.DataType) (arrow.ArrayData, error) {
	if len(parts) == 1 {
		data := parts[0].Data()
		data.Retain()
		return data, nil
	}
	var size uint64
	for _, p := range parts {
		size += uint64(p.Len()) * approxWidth(dt)
	}
	if err := d.req.Budget.Take(size); err != nil {
		return nil, err
	}
	arr, err := array.Concatenate(parts, d.req.Mem)
	if err != nil {
		return nil, encoding.Corruptf("concatenating pages: %v", err)
	}
	defer arr.Release()
	data := arr.Data()
	data.Retain()
	return data, nil
}
