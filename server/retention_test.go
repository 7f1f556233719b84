package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
)

// TestManagedVersionRemoval checks DeleteTableVersions and the optimize
// route on a table lancens writes: a bad range is refused with code 13 and
// nothing goes; the versions named go (as in namespace mode, whatever
// keeps them: see engine's TestDeleteLatestVersion), and time travel to
// them answers 404 code 11 while the others read as before.
func TestManagedVersionRemoval(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	c := s.Client
	createPeople(t, c, "p")
	id := []string{"p"}
	for range 3 {
		if _, err := c.Update(ctx, id, [][2]string{{"age", "age + 1"}}, "id < 3"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateTableTag(ctx, id, "t", 2, ""); err != nil {
		t.Fatal(err)
	}
	count := func(v int64) (int64, error) { return c.CountRows(ctx, id, "age > 27", &v) }
	want := map[int64]int64{1: 2, 2: 2, 3: 2, 4: 3}
	for _, tc := range []struct {
		name   string
		ranges []client.VersionRange
		want   store.Code
	}{
		{"NegativeStart", []client.VersionRange{{Start: -1, End: 1}}, store.CodeInvalidInput},
		{"Backwards", []client.VersionRange{{Start: 3, End: 1}}, store.CodeInvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := c.DeleteTableVersions(ctx, id, "", tc.ranges...); store.ErrorCode(err) != tc.want {
				t.Fatalf("got %v, want code %d", err, tc.want)
			}
			for v, n := range want {
				if got, err := count(v); err != nil || got != n {
					t.Fatalf("a refused removal changed version %d: %d %v", v, got, err)
				}
			}
		})
	}
	if n, _, err := c.DeleteTableVersions(ctx, id, "", client.VersionRange{Start: 3, End: 4}); err != nil || n != 1 {
		t.Fatalf("delete version 3: %d %v", n, err)
	}
	delete(want, 3)

	optimize := func(body string) (int, []byte) {
		status, out, _ := s.Do(t, http.MethodPost, "/v1/table/p/optimize", jsonHeader, []byte(body))
		return status, out
	}
	status, out := optimize(`{"older_than_seconds": 0}`)
	var res server.OptimizeTableResponse
	// Optimize first compacts the fragments the
	// updates left into one, as version 5: version 4 is then no longer the
	// latest, and goes too.
	if status != http.StatusOK || json.Unmarshal(out, &res) != nil || res.VersionsRemoved != 2 || res.TransactionID == "" {
		t.Fatalf("optimize: %d %s", status, out)
	}
	delete(want, 1)
	if res.FragmentsAdded != 1 || res.FragmentsRemoved < 2 || res.RowsRemoved == 0 || res.BytesFreed == 0 {
		t.Fatalf("optimize compacted %d fragments into %d, removing %d rows and %d bytes; want several into one",
			res.FragmentsRemoved, res.FragmentsAdded, res.RowsRemoved, res.BytesFreed)
	}
	delete(want, 4)
	want[5] = 3
	for v := int64(1); v <= 5; v++ {
		got, err := count(v)
		if n, ok := want[v]; ok {
			if err != nil || got != n {
				t.Errorf("kept version %d: %d %v, want %d", v, got, err, n)
			}
			continue
		}
		if store.ErrorCode(err) != store.CodeTableVersionNotFound {
			t.Errorf("removed version %d: %v, want code 11", v, err)
		}
		status, body, _ := s.Do(t, http.MethodPost, "/v1/table/p/describe", jsonHeader, []byte(fmt.Sprintf(`{"version": %d}`, v)))
		if status != http.StatusNotFound || apitest.ErrorCode(body) != int(store.CodeTableVersionNotFound) {
			t.Errorf("describe removed version %d: %d %s", v, status, body)
		}
	}

	if _, err := c.DeclareTable(ctx, []string{"declared"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, body string
		status, code     int
	}{
		{"MissingTable", "/v1/table/nope/optimize", `{}`, http.StatusNotFound, int(store.CodeTableNotFound)},
		{"NotManaged", "/v1/table/declared/optimize", `{}`, http.StatusConflict, int(store.CodeInvalidTableState)},
		{"NegativeAge", "/v1/table/p/optimize", `{"older_than_seconds": -1}`, http.StatusBadRequest, int(store.CodeInvalidInput)},
		{"UnknownField", "/v1/table/p/optimize", `{"older": 1}`, http.StatusBadRequest, int(store.CodeInvalidInput)},
		{"NotJSON", "/v1/table/p/optimize", `[`, http.StatusBadRequest, int(store.CodeInvalidInput)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := s.Do(t, http.MethodPost, tc.path, jsonHeader, []byte(tc.body))
			if status != tc.status || apitest.ErrorCode(body) != tc.code {
				t.Fatalf("got %d %s, want %d code %d", status, body, tc.status, tc.code)
			}
		})
	}
}
