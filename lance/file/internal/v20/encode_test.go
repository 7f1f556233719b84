package v20

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/schema"
)

// TestPagesStayWithinPageBytes checks that a page is written before the
// value that would take it past the page size, for each kind of values
// (going past it made every full page be copied to grow by one value),
// and that a value bigger than a page still gets a page of its own.
func TestPagesStayWithinPageBytes(t *testing.T) {
	const pageBytes = 10000
	mem := memory.DefaultAllocator
	vector := func(rows, dim int) arrow.Array {
		b := array.NewFixedSizeListBuilder(mem, int32(dim), arrow.PrimitiveTypes.Float32)
		defer b.Release()
		vb := b.ValueBuilder().(*array.Float32Builder)
		for i := range rows {
			b.Append(true)
			for k := range dim {
				vb.Append(float32(i + k))
			}
		}
		return b.NewArray()
	}
	ints := func(rows int) arrow.Array {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := range rows {
			b.Append(int64(i))
		}
		return b.NewArray()
	}
	strs := func(rows, size int) arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for i := range rows {
			s := make([]byte, size)
			for k := range s {
				s[k] = byte('a' + (i+k)%26)
			}
			b.Append(string(s))
		}
		return b.NewArray()
	}
	cases := []struct {
		name    string
		batch   func() arrow.Array // appended three times
		biggest int                // the largest page that may be written
	}{
		// 312 vectors of 32 bytes fill 9,984 bytes: the 313th would pass.
		{"vectors", func() arrow.Array { return vector(1000, 8) }, pageBytes},
		{"ints", func() arrow.Array { return ints(3001) }, pageBytes},
		// 96 bytes a string and 8 of end: 92 fit.
		{"strings", func() arrow.Array { return strs(700, 96) }, pageBytes},
		{"a vector bigger than a page", func() arrow.Array { return vector(2, 4000) }, 16000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			arr := c.batch()
			defer arr.Release()
			s, err := schema.FromArrow(arrow.NewSchema([]arrow.Field{{Name: "v", Type: arr.DataType()}}, nil))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.AssignIDs(0); err != nil {
				t.Fatal(err)
			}
			e, err := NewEncoder(s, pageBytes)
			if err != nil {
				t.Fatal(err)
			}
			var pages []encoding.EncodedPage
			for i := range 3 {
				out, err := e.Append([]arrow.Array{arr}, uint64(i*arr.Len()))
				if err != nil {
					t.Fatal(err)
				}
				pages = append(pages, out...)
			}
			last, err := e.Finish()
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, last...)
			var rows uint64
			for i, p := range pages {
				size := 0
				for _, b := range p.Buffers {
					size += len(b)
				}
				if size > c.biggest {
					t.Errorf("page %d of %d holds %d rows in %d bytes, more than %d", i, len(pages), p.Length, size, c.biggest)
				}
				rows += p.Length
			}
			if want := uint64(3 * arr.Len()); rows != want {
				t.Errorf("the pages hold %d rows, want %d", rows, want)
			}
		})
	}
}
