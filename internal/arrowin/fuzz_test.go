package arrowin_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancens/lancens/internal/arrowin"
	"github.com/lancens/lancens/internal/arrowtest"
)

// FuzzDecode feeds arbitrary bytes to a Reader, read to its end, seeded
// with valid streams of every column type (plain, LZ4 and ZSTD) and with
// the crafted hostile bodies, plus the corpus in testdata/fuzz/FuzzDecode.
// It must never
// panic, must return batches or an *arrowin.Error, must not allocate more
// than a small multiple of its input plus the decoded-bytes limit, and
// every value of the batches it returns must be readable.
func FuzzDecode(f *testing.F) {
	schema, batches := richBatches(f)
	f.Add(arrowtest.Stream(f, schema, batches))
	f.Add(arrowtest.Stream(f, schema, batches, ipc.WithLZ4()))
	f.Add(arrowtest.Stream(f, schema, batches, ipc.WithZstd()))
	for _, b := range arrowtest.HostileTemplates(f) {
		f.Add(b)
	}
	for _, h := range arrowtest.HostileBodies(f) {
		if len(h.Body) < 64<<10 {
			f.Add(h.Body)
		}
	}
	lim := arrowin.Limits{MaxBodyBytes: 1 << 20, MaxDecodedBytes: 4 << 20, MaxRows: 100_000}
	f.Fuzz(func(t *testing.T, body []byte) {
		var (
			recs []arrow.RecordBatch
			err  error
		)
		n := allocated(func() {
			_, recs, err = decode(bytes.NewReader(body), lim)
		})
		if limit := uint64(8*len(body)) + uint64(2*lim.MaxDecodedBytes) + 8<<20; n > limit {
			t.Fatalf("allocated %d bytes for a %d-byte body (limit %d)", n, len(body), limit)
		}
		if err != nil {
			var e *arrowin.Error
			if !errors.As(err, &e) {
				t.Fatalf("the Reader returned %T: %v", err, err)
			}
			return
		}
		for _, rec := range recs {
			if _, err := json.Marshal(rec); err != nil {
				t.Fatalf("a decoded batch does not marshal: %v", err)
			}
		}
	})
}
