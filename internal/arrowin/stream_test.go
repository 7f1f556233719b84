package arrowin_test

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancens/lancens/internal/arrowin"
	"github.com/lancens/lancens/internal/arrowtest"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestReaderReadsSchemaAlone: NewReader reads the schema message and not
// a byte past it, so a body of the wrong schema can be refused before any
// batch is decoded, however broken or large the batches are.
func TestReaderReadsSchemaAlone(t *testing.T) {
	schemaOnly := arrowtest.Stream(t, arrowtest.HostileSchema, nil)
	schema := schemaOnly[:len(schemaOnly)-8] // without the end-of-stream marker
	for _, tc := range []struct {
		name string
		rest []byte
	}{
		{"garbage", bytes.Repeat([]byte{0x5a}, 4096)},
		{"metadata_2GiB", []byte{0xff, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0x7f, 0, 0, 0, 0}},
		{"cut_short", []byte{0xff, 0xff}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr := &countingReader{r: bytes.NewReader(append(append([]byte(nil), schema...), tc.rest...))}
			rd, err := arrowin.NewReader(cr, defaults)
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			if !rd.Schema().Equal(arrowtest.HostileSchema) || cr.n != len(schema) {
				t.Fatalf("schema %s after reading %d bytes; want the schema message's %d", rd.Schema(), cr.n, len(schema))
			}
			if _, err := rd.Next(); err == nil || errors.Is(err, io.EOF) {
				t.Fatalf("what follows the schema read as %v", err)
			}
		})
	}
}

// fakeBudget is a Budget that records what is held and can refuse.
type fakeBudget struct {
	mu         sync.Mutex
	limit      int64
	held, most int64
	refusals   int
}

var errNoRoom = errors.New("no room in the budget")

func (b *fakeBudget) Reserve(n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held+n > b.limit {
		b.refusals++
		return errNoRoom
	}
	b.held += n
	b.most = max(b.most, b.held)
	return nil
}

func (b *fakeBudget) Return(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
	if b.held < 0 {
		panic("returned more than reserved")
	}
}

func (b *fakeBudget) now() (held, most int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held, b.most
}

// TestReaderHoldsBatchesUntilReleased: a batch's decoded bytes stay
// reserved until its last release; read one at a time and released, the
// batches of a stream hold about one batch's worth however many there
// are; Close gives back what unreleased batches hold, once.
func TestReaderHoldsBatchesUntilReleased(t *testing.T) {
	rec := arrowtest.ZeroVectors(10_000, 32) // 1.28 MB decoded
	batches := []arrow.RecordBatch{rec, rec, rec, rec, rec, rec, rec, rec}
	for _, codec := range []struct {
		name string
		opts []ipc.Option
	}{{"plain", nil}, {"lz4", []ipc.Option{ipc.WithLZ4()}}, {"zstd", []ipc.Option{ipc.WithZstd()}}} {
		t.Run(codec.name, func(t *testing.T) {
			body := arrowtest.Stream(t, rec.Schema(), batches, codec.opts...)
			b := &fakeBudget{limit: 1 << 30}
			lim := defaults
			lim.Budget = b
			rd, err := arrowin.NewReader(bytes.NewReader(body), lim)
			if err != nil {
				t.Fatal(err)
			}
			var kept arrow.RecordBatch
			for i := 0; ; i++ {
				got, err := rd.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if held, _ := b.now(); held < 1_280_000 {
					t.Fatalf("batch %d: %d bytes reserved, less than its buffers", i, held)
				}
				got.Retain()
				got.Release() // one reference still out
				if i == 3 {
					kept = got // never released before Close
					continue
				}
				got.Release()
			}
			held, most := b.now()
			if held < 1_280_000 || held > 1_500_000 || most > 3_500_000 {
				t.Fatalf("holding %d bytes with one batch out (peak %d): want one batch's worth, peak two", held, most)
			}
			rd.Close()
			kept.Release() // after Close: returns nothing more
			if held, _ := b.now(); held != 0 {
				t.Fatalf("%d bytes still reserved after Close", held)
			}
		})
	}
}

// TestReaderRefusesBeyondBudget: a message whose bytes (as sent, or once
// decompressed) do not fit in the Budget fails with the Budget's error,
// before it is decompressed, and gives back all it reserved.
func TestReaderRefusesBeyondBudget(t *testing.T) {
	rec := arrowtest.ZeroVectors(100_000, 32) // 12.8 MB decoded, a few KB sent
	body := arrowtest.Stream(t, rec.Schema(), []arrow.RecordBatch{rec}, ipc.WithLZ4())
	b := &fakeBudget{limit: 4 << 20}
	lim := defaults
	lim.Budget = b
	rd, err := arrowin.NewReader(bytes.NewReader(body), lim)
	if err != nil {
		t.Fatal(err)
	}
	var got error
	n := allocated(func() { _, got = rd.Next() })
	if !errors.Is(got, errNoRoom) {
		t.Fatalf("got %v, want the budget's error", got)
	}
	if n > 2<<20 {
		t.Fatalf("allocated %d bytes refusing a batch the budget has no room for", n)
	}
	rd.Close()
	if held, _ := b.now(); held != 0 {
		t.Fatalf("%d bytes still reserved after Close", held)
	}
}
