package v20

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/schema"
)

// unmarshalAny decodes an Any's message into m after checking its type
// URL ends with want.
func unmarshalAny(typeURL string, value []byte, want string, m proto.Message) error {
	if len(typeURL) < len(want) || typeURL[len(typeURL)-len(want):] != want {
		return encoding.Corruptf("an encoding of type %q where %q belongs", typeURL, want)
	}
	if err := proto.Unmarshal(value, m); err != nil {
		return encoding.Corruptf("an encoding: %v", err)
	}
	return nil
}

// listField decodes a list field: its column's pages give, per list, the
// end of its items relative to the page (plus null_offset_adjustment when
// null); the items are the values of the list's child, counted from the
// start of the page's items, which follow those of the earlier pages.
func (d *fieldDecoder) listField(f *schema.Field, dt arrow.DataType, spans []span, depth int) (arrow.ArrayData, error) {
	var itemType arrow.DataType
	width := 4
	switch t := dt.(type) {
	case *arrow.ListType:
		itemType = t.Elem()
	case *arrow.LargeListType:
		itemType, width = t.Elem(), 8
	default:
		return nil, encoding.Corruptf("list field %s read as %s", f.Name, dt)
	}
	col, err := d.column(f)
	if err != nil {
		return nil, err
	}
	if err := checkValuesColumn(col); err != nil {
		return nil, err
	}
	encs, err := pageEncodings(col)
	if err != nil {
		return nil, err
	}
	// Where each page's items start among the child's values.
	itemStarts := make([]uint64, len(col.Pages))
	var items uint64
	for i, e := range encs {
		itemStarts[i] = items
		if e == nil {
			continue
		}
		l := e.GetList()
		if l == nil {
			return nil, encoding.Corruptf("a page of list field %s is not a list encoding", f.Name)
		}
		if items+l.GetNumItems() < items {
			return nil, encoding.Corruptf("the item counts of list field %s overflow", f.Name)
		}
		items += l.GetNumItems()
	}

	n := total(spans)
	offsets, err := (&page{req: d.req}).allocN(n+1, uint64(width))
	if err != nil {
		return nil, err
	}
	var validity []byte
	var itemSpans []span
	var row, cum uint64
	err = forPages(col, spans, func(i int, local []span) error {
		l := encs[i].GetList()
		entries := make([]span, len(local))
		for k, s := range local {
			entries[k] = s
			if s.start > 0 {
				entries[k].start--
			}
		}
		p := &page{ctx: d.ctx, req: d.req, col: col, info: &col.Pages[i]}
		od, err := p.decode(l.GetOffsets(), arrow.PrimitiveTypes.Uint64, entries, 1)
		if err != nil {
			return err
		}
		defer od.Release()
		ends := u64s(od)
		adj, numItems := l.GetNullOffsetAdjustment(), l.GetNumItems()
		norm := func(v uint64) (uint64, bool) {
			if v >= adj {
				return v - adj, false
			}
			return v, true
		}
		at := 0
		for _, s := range local {
			var prev uint64
			if s.start > 0 {
				prev, _ = norm(ends[at])
				at++
			}
			first := prev
			for range s.end - s.start {
				end, valid := norm(ends[at])
				at++
				if end < prev || end > numItems {
					return encoding.Corruptf("list field %s: an item offset %d after %d, of %d items", f.Name, end, prev, numItems)
				}
				cum += end - prev
				prev = end
				row++
				if !valid && validity == nil {
					if validity, err = p.alloc(bitmapBytes(n)); err != nil {
						return err
					}
					for r := uint64(0); r < row-1; r++ {
						setBit(validity, int(r))
					}
				} else if valid && validity != nil {
					setBit(validity, int(row-1))
				}
				if width == 4 {
					if cum > math.MaxInt32 {
						return encoding.Unsupportedf("more than 2^31 items of list field %s in one read: read fewer rows, or use a large list", f.Name)
					}
					binary.LittleEndian.PutUint32(offsets[4*row:], uint32(cum))
				} else {
					binary.LittleEndian.PutUint64(offsets[8*row:], cum)
				}
			}
			if prev > first {
				gs := span{itemStarts[i] + first, itemStarts[i] + prev}
				if k := len(itemSpans); k > 0 && itemSpans[k-1].end == gs.start {
					itemSpans[k-1].end = gs.end
				} else {
					itemSpans = append(itemSpans, gs)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var child arrow.ArrayData
	if len(itemSpans) > 0 {
		if child, err = d.field(f.Children[0], itemType, itemSpans, depth+1); err != nil {
			return nil, err
		}
	} else {
		empty := array.MakeArrayOfNull(d.req.Mem, itemType, 0)
		child = empty.Data()
		child.Retain()
		empty.Release()
	}
	defer child.Release()
	vbuf, nulls := validityBuffer(validity)
	return array.NewData(dt, int(n), []*memory.Buffer{vbuf, memory.NewBufferBytes(offsets)}, []arrow.ArrayData{child}, nulls, 0), nil
}
