package v21

import (
	"context"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
	"github.com/lancens/lancens/lance/schema"
)

// pageLayoutType is the type URL of a 2.1 page's encoding.
const pageLayoutType = "/lance.encodings21.PageLayout"

// Decoder decodes files of format 2.1 and 2.2. It has no state of its
// own: parsed page layouts are kept on each column (encoding.Column.Memo).
type Decoder struct{}

var _ encoding.Decoder = Decoder{}

// packed reports whether a struct is stored packed in one column, by the
// rule Lance's writer applies to its metadata ("packed": "true", or the
// key lance-encoding:packed).
func packed(f *schema.Field) bool {
	if !f.IsStruct() {
		return false
	}
	if v, ok := f.Metadata["packed"]; ok {
		return v == "true"
	}
	_, ok := f.Metadata["lance-encoding:packed"]
	return ok
}

// Columns implements encoding.Decoder: each leaf field (a primitive, a
// string or binary, a fixed-size list, a struct without fields) and each
// packed struct owns a column, in pre-order; other structs and lists own
// none.
func (Decoder) Columns(s *schema.Schema, numColumns int) (map[int32]int, error) {
	out := map[int32]int{}
	var assign func(f *schema.Field)
	assign = func(f *schema.Field) {
		if f.IsLeaf() || packed(f) {
			out[f.ID] = len(out)
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
		return nil, corrupt("the schema's leaves need %d columns, the file has %d", len(out), numColumns)
	}
	return out, nil
}

// Decode implements encoding.Decoder: it reads the rows of every leaf of
// the field (only the chunks or bytes holding them), then assembles the
// field's array from the leaves' levels.
func (Decoder) Decode(ctx context.Context, req *encoding.Request) (arrow.Array, error) {
	spans := make([]span, len(req.Ranges))
	for i, r := range req.Ranges {
		spans[i] = span{r.Start, r.End}
	}
	bud := budget{b: req.Budget}
	cols := map[int32]*Column{}
	var walk func(f *schema.Field, depth int) error
	walk = func(f *schema.Field, depth int) error {
		if depth > schema.MaxDepth {
			return corrupt("fields nest more than %d deep", schema.MaxDepth)
		}
		if !f.IsLeaf() && !packed(f) {
			for _, c := range f.Children {
				if err := walk(c, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		col := req.Columns[f.ID]
		if col == nil {
			return corrupt("field %s (id %d) has no column", f.Name, f.ID)
		}
		c, err := readLeaf(ctx, req.File, col, spans, bud)
		if err != nil {
			return fmt.Errorf("column %d: %w", col.Index, err)
		}
		cols[f.ID] = c
		return nil
	}
	if err := walk(req.Field, 1); err != nil {
		return nil, err
	}
	arr, err := assemble(req.Field, req.Type, cols, req.Mem, bud)
	if err != nil {
		return nil, err
	}
	var want uint64
	for _, s := range spans {
		want += s.end - s.start
	}
	if uint64(arr.Len()) != want {
		arr.Release()
		return nil, corrupt("field %s assembles to %d rows, not the %d read", req.Field.Name, arr.Len(), want)
	}
	return arr, nil
}

// span is the rows [start, end).
type span struct{ start, end uint64 }

// layout is a parsed page layout of one of the three kinds.
type layout struct {
	mini  *miniLayout
	zip   *zipLayout
	konst *constLayout
}

// pageLayouts returns the parsed layouts of a column's pages.
func pageLayouts(col *encoding.Column) ([]layout, error) {
	v, err := col.Memo(func() (any, error) {
		out := make([]layout, len(col.Pages))
		for i := range col.Pages {
			pg := &col.Pages[i]
			if pg.EncodingType != pageLayoutType {
				return nil, corrupt("page %d is encoded as %q, not a 2.1 page layout", i, pg.EncodingType)
			}
			var pl enc21pb.PageLayout
			if err := proto.Unmarshal(pg.Encoding, &pl); err != nil {
				return nil, corrupt("page %d: layout: %v", i, err)
			}
			var err error
			switch l := pl.GetLayout().(type) {
			case *enc21pb.PageLayout_MiniBlockLayout:
				out[i].mini, err = newMiniLayout(l.MiniBlockLayout)
			case *enc21pb.PageLayout_FullZipLayout:
				out[i].zip, err = newZipLayout(l.FullZipLayout)
			case *enc21pb.PageLayout_ConstantLayout:
				out[i].konst, err = newConstLayout(l.ConstantLayout)
			case *enc21pb.PageLayout_BlobLayout:
				err = unsupported("blob pages")
			case nil:
				err = corrupt("no layout")
			default:
				err = unsupported("page layout %T", l)
			}
			if err != nil {
				return nil, fmt.Errorf("page %d: %w", i, err)
			}
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]layout), nil
}

// readLeaf reads the rows at spans (sorted, disjoint, non-empty) of a
// leaf column, page by page.
func readLeaf(ctx context.Context, f encoding.File, col *encoding.Column, spans []span, bud budget) (*Column, error) {
	layouts, err := pageLayouts(col)
	if err != nil {
		return nil, err
	}
	out := &Column{bud: bud}
	err = forPages(col, spans, func(i int, local []span) error {
		pg := &col.Pages[i]
		if err := bud.items(pg.Length, "a page's rows"); err != nil {
			return err
		}
		var runs []*Page
		var err error
		switch l := layouts[i]; {
		case l.mini != nil:
			runs, err = l.mini.read(ctx, f, pg, local, bud)
		case l.zip != nil:
			runs, err = l.zip.read(ctx, f, pg, local, bud)
		default:
			var p *Page
			if p, err = l.konst.read(ctx, f, pg, bud); err == nil {
				runs = []*Page{p}
			}
		}
		if err != nil {
			return fmt.Errorf("page %d: %w", i, err)
		}
		// Each span lies within one run.
		k := 0
		for _, s := range local {
			for k < len(runs) && uint64(runs[k].firstRow+runs[k].rows) <= s.start {
				k++
			}
			if k == len(runs) || uint64(runs[k].firstRow) > s.start || uint64(runs[k].firstRow+runs[k].rows) < s.end {
				return corrupt("page %d: rows %d–%d were not decoded", i, s.start, s.end)
			}
			r := runs[k]
			if err := out.Append(r, int(s.start)-r.firstRow, int(s.end)-r.firstRow); err != nil {
				return fmt.Errorf("page %d: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// forPages calls fn for each page of col that spans touch (page index i
// and the spans within it, page-relative), in order.
func forPages(col *encoding.Column, spans []span, fn func(i int, local []span) error) error {
	if last := spans[len(spans)-1].end; last > col.Rows() {
		return corrupt("column %d holds %d rows, not the %d its field needs", col.Index, col.Rows(), last)
	}
	i := 0
	var local []span
	for si := 0; si < len(spans); {
		start, end := spans[si].start, spans[si].end
		i += sort.Search(len(col.Pages)-i, func(k int) bool {
			pg := &col.Pages[i+k]
			return pg.First+pg.Length > start
		})
		pg := &col.Pages[i]
		pageEnd := pg.First + pg.Length
		local = local[:0]
		for si < len(spans) && start < pageEnd {
			local = append(local, span{start - pg.First, min(end, pageEnd) - pg.First})
			if end > pageEnd {
				spans = append([]span{{pageEnd, end}}, spans[si+1:]...)
				si = 0
				break
			}
			si++
			if si < len(spans) {
				start, end = spans[si].start, spans[si].end
			}
		}
		if err := fn(i, local); err != nil {
			return err
		}
	}
	return nil
}
