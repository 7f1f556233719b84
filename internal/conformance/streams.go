package conformance

import (
	"errors"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/store"
)

// streams checks how writes read store.Data's stream: every batch a write
// takes is released by the time it returns, whether it succeeded or not;
// an error of the stream fails the write with that very error and leaves
// nothing of it (rows staged before the error included); the schema is
// checked before the rows.
func (s *suite) streams(t T) {
	// streamRows is enough rows to take a write past one chunk of a
	// backend that writes in chunks (store/sqlite stages 32,768 rows at a
	// time), so that a stream error arrives after rows were staged.
	const streamRows, batches = 50_000, 5
	writes := []struct {
		name  string
		write func(tg DataTarget, id []string, d store.Data) error
	}{
		{"Create", func(tg DataTarget, _ []string, d store.Data) error {
			_, _, err := tg.CreateTable(ctx(t), []string{"fresh"}, store.NewTable{Data: d})
			return err
		}},
		{"CreateOverwrite", func(tg DataTarget, id []string, d store.Data) error {
			_, _, err := tg.CreateTable(ctx(t), id, store.NewTable{Mode: store.ModeOverwrite, Data: d})
			return err
		}},
		{"Append", func(tg DataTarget, id []string, d store.Data) error {
			_, err := tg.Insert(ctx(t), id, store.InsertAppend, d)
			return err
		}},
		{"Overwrite", func(tg DataTarget, id []string, d store.Data) error {
			_, err := tg.Insert(ctx(t), id, store.InsertOverwrite, d)
			return err
		}},
		{"Merge", func(tg DataTarget, id []string, d store.Data) error {
			_, err := tg.MergeInsert(ctx(t), id, store.Merge{On: []string{"id"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true, Data: d})
			return err
		}},
	}
	rowBatches := func(t T) []arrow.RecordBatch {
		var out []arrow.RecordBatch
		per := int64(streamRows / batches)
		for i := range int64(batches) {
			d := itemsData(t, makeItems(1000+i*per, 999+(i+1)*per))
			b, err := d.Batches.Next()
			noErr(t, err)
			out = append(out, b)
		}
		return out
	}

	Subtest(t, "ErrorMidStream", func(t T) {
		all := rowBatches(t)
		for _, w := range writes {
			Subtest(t, w.name, func(t T) {
				tg := s.dataTarget(t)
				id := createItems(t, tg, "items", 5)
				broken := errors.New("the body broke off")
				st := newCountedStream(all[:batches-1], broken)
				err := w.write(tg, id, store.Data{Schema: itemsSchema, Batches: st})
				if !errors.Is(err, broken) {
					t.Fatalf("a write whose stream failed returned %v, not the stream's error", err)
				}
				st.released(t)
				if d := must(tg.Describe(ctx(t), id, nil))(t); d.Version != 1 || count(t, tg, id, nil, "") != 5 {
					t.Fatalf("a failed write changed the table: version %d, %d rows", d.Version, count(t, tg, id, nil, ""))
				}
				if _, err := tg.DescribeTable(ctx(t), []string{"fresh"}); store.ErrorCode(err) != store.CodeTableNotFound {
					t.Fatalf("a failed create left a table (describe: %v)", err)
				}
			})
		}
	})

	Subtest(t, "AllReleased", func(t T) {
		all := rowBatches(t)
		for _, w := range writes {
			Subtest(t, w.name, func(t T) {
				tg := s.dataTarget(t)
				id := createItems(t, tg, "items", 5)
				st := newCountedStream(all[:2], io.EOF)
				noErr(t, w.write(tg, id, store.Data{Schema: itemsSchema, Batches: st}))
				st.released(t)
			})
		}
	})

	Subtest(t, "SchemaFirst", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 5)
		other := recordData(t, arrowSchema("x", arrow.PrimitiveTypes.Int64), `[{"x": 1}]`)
		b, err := other.Batches.Next()
		noErr(t, err)
		st := newCountedStream([]arrow.RecordBatch{b}, io.EOF)
		_, err = tg.Insert(ctx(t), id, store.InsertAppend, store.Data{Schema: other.Schema, Batches: st})
		wantCode(t, err, store.CodeTableSchemaValidationError)
		st.released(t)
	})
}

// arrowSchema is a schema of one nullable field.
func arrowSchema(name string, dt arrow.DataType) *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{{Name: name, Type: dt, Nullable: true}}, nil)
}

// countedStream yields batches, then end (io.EOF, or an error that breaks
// the stream), and counts the batches it handed out that are not yet
// released.
type countedStream struct {
	batches []arrow.RecordBatch
	end     error
	next    int
	mu      sync.Mutex
	out     int
}

func newCountedStream(batches []arrow.RecordBatch, end error) *countedStream {
	return &countedStream{batches: batches, end: end}
}

func (c *countedStream) Next() (arrow.RecordBatch, error) {
	if c.next >= len(c.batches) {
		return nil, c.end
	}
	b := c.batches[c.next]
	c.next++
	b.Retain()
	c.mu.Lock()
	c.out++
	c.mu.Unlock()
	return store.WithRelease(b, func() {
		c.mu.Lock()
		c.out--
		c.mu.Unlock()
	}), nil
}

// released fails t unless every batch handed out has been released.
func (c *countedStream) released(t T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.out != 0 {
		t.Fatalf("the write returned holding %d of the %d batches it read", c.out, c.next)
	}
}
