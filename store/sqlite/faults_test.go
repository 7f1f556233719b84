package sqlite_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/arrowtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// TestStorageFaults puts the database in a fault an operator must fix (a
// full disk, a read-only database) and checks that every kind of write it
// stops answers 503 with code 17 ServiceUnavailable, that nothing changed,
// and that reads go on working. A full disk stops the writes that need new
// pages; a read-only database stops them all, the writes of rows too
// (their data files are written to the warehouse, but the version is not
// recorded).
func TestStorageFaults(t *testing.T) {
	for _, fault := range []struct {
		name       string
		apply      func(*sqlite.DB) error
		stopsSmall bool // writes that may fit in the pages the database has fail too
	}{
		{"DiskFull", sqlite.FillDisk, false},
		{"ReadOnly", sqlite.MakeReadOnly, true},
	} {
		t.Run(fault.name, func(t *testing.T) {
			s := apitest.Start(t, apitest.Options{})
			ctx := t.Context()
			schema := arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "text", arrow.BinaryTypes.String)
			rec := arrowtest.Record(t, schema, `[{"id":1,"text":"a"}]`)
			if _, err := s.Client.CreateTable(ctx, []string{"t"}, schema, []arrow.RecordBatch{rec}, nil); err != nil {
				t.Fatal(err)
			}
			if err := fault.apply(s.DB); err != nil {
				t.Fatal(err)
			}
			big := strings.Repeat("x", 64<<10) // needs pages the database does not have
			rows := make([]string, 200)
			for i := range rows {
				rows[i] = fmt.Sprintf(`{"id":%d,"text":%q}`, i+2, big[:1000])
			}
			arrowCT := http.Header{"Content-Type": {"application/vnd.apache.arrow.stream"}}
			jsonCT := http.Header{"Content-Type": {"application/json"}}
			for _, w := range []struct {
				name, path string
				header     http.Header
				body       []byte
				small      bool // a catalog record of a few bytes: the rows go to the warehouse
			}{
				{"CreateNamespace", "/v1/namespace/n/create", jsonCT, fmt.Appendf(nil, `{"properties":{"k":%q}}`, big), false},
				{"Insert", "/v1/table/t/insert", arrowCT, stream(t, schema, arrowtest.Record(t, schema, "["+strings.Join(rows, ",")+"]")), true},
				{"CreateTable", "/v1/table/u/create", arrowCT, stream(t, schema, arrowtest.Record(t, schema, "["+strings.Join(rows, ",")+"]")), true},
				{"Delete", "/v1/table/t/delete", jsonCT, []byte(`{"predicate":"id = 1"}`), true},
			} {
				if w.small && !fault.stopsSmall {
					continue
				}
				t.Run(w.name, func(t *testing.T) {
					status, out, _ := s.Do(t, "POST", w.path, w.header, w.body)
					if status != http.StatusServiceUnavailable || apitest.ErrorCode(out) != int(store.CodeServiceUnavailable) {
						t.Fatalf("got %d %.300s, want 503 code 17", status, out)
					}
				})
			}
			if ok, err := s.Client.NamespaceExists(ctx, []string{"n"}); err != nil || ok {
				t.Fatalf("the refused namespace exists: %v %v", ok, err)
			}
			n, err := s.Client.CountRows(ctx, []string{"t"}, "", nil)
			if err != nil || n != 1 {
				t.Fatalf("rows after the refused writes: %d %v, want 1", n, err)
			}
		})
	}
}

func stream(t *testing.T, schema *arrow.Schema, rec arrow.RecordBatch) []byte {
	t.Helper()
	var buf strings.Builder
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(buf.String())
}
