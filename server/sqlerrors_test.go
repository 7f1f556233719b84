package server_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/internal/apitest"
	"github.com/lancens/lancens/internal/arrowtest"
)

// driverWording matches what the SQLite driver puts around a failure: its
// description of the result code, our functions' marker, a trailing
// result code.
var driverWording = regexp.MustCompile(`SQL logic error|lance function error|\(\d+\)$`)

// TestEvaluationErrorsAreClean sends expressions that SQLite fails to
// evaluate, on every route that evaluates one, and checks the answer: the
// right code, and a message in lancens's words. This is a check on the
// message because a leaking message is the bug: SQLite's wording reached
// callers ("SQL logic error: invalid integer text ... (1)").
func TestEvaluationErrorsAreClean(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	schema := arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "name", arrow.BinaryTypes.String, "tags", arrow.ListOf(arrow.BinaryTypes.String))
	rec := arrowtest.Record(t, schema, `[{"id":1,"name":"a","tags":["x"]},{"id":2,"name":"12","tags":null}]`)
	if _, err := s.Client.CreateTable(t.Context(), []string{"t"}, schema, []arrow.RecordBatch{rec}, nil); err != nil {
		t.Fatal(err)
	}
	// The in-memory evaluator fails on the same values with code 13 in
	// lancens's words; "AND (tags IS NULL OR TRUE)" reads a list, which
	// the memory cache does not hold, so that SQLite runs the filter.
	for _, tc := range []struct {
		name, path, body string
		wantCode         int
	}{
		{"QueryCast", "query", `{"vector":null,"k":10,"filter":"CAST(name AS INT) > 0 AND (tags IS NULL OR TRUE)"}`, 13},
		{"QueryOverflow", "query", `{"vector":null,"k":10,"filter":"abs(-9223372036854775808) > 0 AND (tags IS NULL OR TRUE)"}`, 13},
		{"QueryDate", "query", `{"vector":null,"k":10,"filter":"CAST(name AS DATE) > date '2020-01-01' AND (tags IS NULL OR TRUE)"}`, 13},
		{"QuerySubstr", "query", `{"vector":null,"k":10,"filter":"substr(name, 1, -1) = 'a' AND (tags IS NULL OR TRUE)"}`, 13},
		{"CountRows", "count_rows", `{"predicate":"CAST(name AS INT) > 0 AND (tags IS NULL OR TRUE)"}`, 13},
		{"QueryCastInMemory", "query", `{"vector":null,"k":10,"filter":"CAST(name AS INT) > 0"}`, 13},
		{"QueryOverflowInMemory", "query", `{"vector":null,"k":10,"filter":"abs(id - 9223372036854775807 - 2) > 0"}`, 13},
		{"CountRowsInMemory", "count_rows", `{"predicate":"substr(name, 1, -1) = 'a'"}`, 13},
		{"Delete", "delete", `{"predicate":"CAST(name AS BOOLEAN)"}`, 13},
		{"Update", "update", `{"updates":[["id","CAST(name AS BIGINT)"]]}`, 13},
		{"AddColumns", "add_columns", `{"new_columns":[{"name":"x","expression":"CAST(name AS INT)"}]}`, 13},
		{"AddColumnsOverflow", "add_columns", `{"new_columns":[{"name":"y","expression":"abs(-9223372036854775808)"}]}`, 13},
		{"AlterColumnType", "alter_columns", `{"alterations":[{"path":"name","data_type":{"type":"int64"}}]}`, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, _ := s.Do(t, "POST", "/v1/table/t/"+tc.path, jsonHeader, []byte(tc.body))
			if status != http.StatusBadRequest || apitest.ErrorCode(out) != tc.wantCode {
				t.Fatalf("got %d %s, want 400 code %d", status, out, tc.wantCode)
			}
			var er struct{ Error string }
			if err := json.Unmarshal(out, &er); err != nil || strings.TrimSpace(er.Error) == "" {
				t.Fatalf("no message in %s", out)
			}
			if driverWording.MatchString(er.Error) {
				t.Fatalf("the message carries the driver's wording: %q", er.Error)
			}
		})
	}
}
