package file_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/schema"
)

// benchBatch is the benchmark shape at a size a test machine
// holds: rows of (id int64, a 100-byte text, a 768-d float32 vector).
func benchBatch(rows int) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	as := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "vector", Type: arrow.FixedSizeListOf(768, arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, as)
	defer b.Release()
	r := rand.New(rand.NewPCG(1, 2))
	ids := b.Field(0).(*array.Int64Builder)
	texts := b.Field(1).(*array.StringBuilder)
	vecs := b.Field(2).(*array.FixedSizeListBuilder)
	items := vecs.ValueBuilder().(*array.Float32Builder)
	for i := 0; i < rows; i++ {
		ids.Append(int64(i))
		t := []byte(text(r, 20))
		if len(t) < 100 {
			t = append(t, make([]byte, 100-len(t))...)
		}
		texts.Append(string(t[:100]))
		vecs.Append(true)
		for k := 0; k < 768; k++ {
			items.Append(r.Float32())
		}
	}
	return b.NewRecordBatch()
}

// benchFiles writes the batch in each format version and returns a reader
// of each file, and the files' sizes.
func benchFiles(b *testing.B, rec arrow.RecordBatch, versions ...file.Version) ([]*file.Reader, []int64, []time.Duration) {
	ctx := context.Background()
	s, err := schema.FromArrow(rec.Schema())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.AssignIDs(0); err != nil {
		b.Fatal(err)
	}
	store := blob.NewDir(b.TempDir())
	var readers []*file.Reader
	var sizes []int64
	var took []time.Duration
	for _, v := range versions {
		name := fmt.Sprintf("f%d%d.lance", v.Major, v.Minor)
		start := time.Now()
		w, err := file.Create(ctx, store, name, s, &file.WriteOptions{Version: v})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			b.Fatal(err)
		}
		written, err := w.Close()
		if err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		r, err := file.Open(ctx, store, name, nil)
		if err != nil {
			b.Fatal(err)
		}
		readers = append(readers, r)
		sizes = append(sizes, written.Size)
	}
	return readers, sizes, took
}

// BenchmarkFormat22vs20 writes, scans and takes from the same rows in
// formats 2.2 and 2.0, alternating, and reports 2.2's time as a ratio of
// 2.0's measured in the same run (below 1: 2.2 is faster), and both sizes.
func BenchmarkFormat22vs20(b *testing.B) {
	rec := benchBatch(20000)
	defer rec.Release()
	ctx := context.Background()
	versions := []file.Version{file.V2_2, file.V2_0}
	readers, sizes, _ := benchFiles(b, rec, versions...)
	b.Logf("file sizes: 2.2 %d bytes, 2.0 %d bytes", sizes[0], sizes[1])
	two, err := readers[0].Schema().Project("id", "text")
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	takes := make([]uint64, 1000)
	for i := range takes {
		takes[i] = r.Uint64N(uint64(rec.NumRows()))
	}
	ops := []struct {
		name string
		run  func(*file.Reader) error
	}{
		{"scan", func(fr *file.Reader) error {
			out, err := fr.ReadRange(ctx, nil, 0, fr.NumRows())
			if err == nil {
				out.Release()
			}
			return err
		}},
		{"scan-id-text", func(fr *file.Reader) error {
			out, err := fr.ReadRange(ctx, two, 0, fr.NumRows())
			if err == nil {
				out.Release()
			}
			return err
		}},
		{"take-1000", func(fr *file.Reader) error {
			out, err := fr.Take(ctx, nil, takes)
			if err == nil {
				out.Release()
			}
			return err
		}},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			var t22, t20 time.Duration
			for i := 0; i < b.N; i++ {
				for k, fr := range readers {
					start := time.Now()
					if err := op.run(fr); err != nil {
						b.Fatal(err)
					}
					if k == 0 {
						t22 += time.Since(start)
					} else {
						t20 += time.Since(start)
					}
				}
			}
			b.ReportMetric(float64(t22)/float64(t20), "x-vs-2.0")
		})
	}
	b.Run("write", func(b *testing.B) {
		var t22, t20 time.Duration
		for i := 0; i < b.N; i++ {
			_, _, took := benchFiles(b, rec, versions...)
			t22 += took[0]
			t20 += took[1]
		}
		b.ReportMetric(float64(t22)/float64(t20), "x-vs-2.0")
		b.ReportMetric(float64(sizes[0])/float64(sizes[1]), "size-vs-2.0")
	})
}
