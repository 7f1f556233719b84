package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/arrowtest"
	"github.com/lancens/lancens/store"
)

// jsonTypesSchema has a column of each kind the JSON answer encodes apart.
var jsonTypesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "vec", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)},
	{Name: "blob", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
}, nil)

const jsonTypesRows = `[
	{"id":1,"name":"one","vec":[1,0,0],"blob":"AAEC","ts":"2024-05-01T12:30:00Z","tags":["a","b"]},
	{"id":2,"name":null,"vec":[0,1,0],"blob":null,"ts":null,"tags":[]},
	{"id":3,"name":"three","vec":[0,0,1],"blob":"/w==","ts":"2024-05-03T00:00:00.5Z","tags":null}
]`

// TestQueryJSON checks query answers as JSON for Accept: application/json
// (an array of row objects: vectors as arrays, binary as base64,
// timestamps RFC 3339), plain scans without vector or k, and the refusal
// of members the query request does not have, naming the closest one.
func TestQueryJSON(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	if _, _, err := s.Data.CreateTable(t.Context(), []string{"t"}, store.NewTable{Data: store.NewData(jsonTypesSchema,
		arrowtest.Record(t, jsonTypesSchema, jsonTypesRows))}); err != nil {
		t.Fatal(err)
	}
	asJSON := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	rows := func(t *testing.T, body string) []map[string]any {
		t.Helper()
		status, out, h := s.Do(t, http.MethodPost, "/v1/table/t/query", asJSON, []byte(body))
		if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %d %s %s", body, status, h.Get("Content-Type"), out)
		}
		var got []map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: not a JSON array of rows: %v %s", body, err, out)
		}
		return got
	}
	all := rows(t, `{}`)
	want := `[{"blob":"AAEC","id":1,"name":"one","tags":["a","b"],"ts":"2024-05-01T12:30:00Z","vec":[1,0,0]},` +
		`{"blob":null,"id":2,"name":null,"tags":[],"ts":null,"vec":[0,1,0]},` +
		`{"blob":"/w==","id":3,"name":"three","tags":null,"ts":"2024-05-03T00:00:00.5Z","vec":[0,0,1]}]`
	if b, _ := json.Marshal(all); string(b) != want {
		t.Fatalf("a scan as JSON:\n%s\nwant\n%s", b, want)
	}
	// Members keep the result's column order.
	_, raw, _ := s.Do(t, http.MethodPost, "/v1/table/t/query", asJSON, []byte(`{"columns":{"column_names":["name","id"]},"k":1}`))
	if got := strings.TrimSpace(string(raw)); got != `[{"name":"one","id":1}]` {
		t.Fatalf("projected JSON %s", got)
	}
	if got := rows(t, `{"filter":"id >= 2","k":1}`); len(got) != 1 || got[0]["id"] != 2.0 {
		t.Fatalf("filtered JSON rows %v", got)
	}
	got := rows(t, `{"vector":{"single_vector":[0,0.9,0.1]},"k":2}`)
	if len(got) != 2 || got[0]["id"] != 2.0 || got[0]["_distance"] == nil {
		t.Fatalf("vector search as JSON %v", got)
	}
	// Without vector and k, a plain scan answers Arrow as before.
	status, out, h := s.Do(t, http.MethodPost, "/v1/table/t/query", jsonHeader, []byte(`{"filter":"id > 1"}`))
	if status != http.StatusOK || h.Get("Content-Type") != "application/vnd.apache.arrow.file" || len(out) == 0 {
		t.Fatalf("scan without vector and k: %d %s", status, h.Get("Content-Type"))
	}

	for _, tc := range []struct {
		name, path, body, member, suggestion string
	}{
		{"Query", "/v1/table/t/query", `{"filters":"id > 1"}`, `"filters"`, `"filter"`},
		{"QueryVector", "/v1/table/t/query", `{"vectr":{"single_vector":[1,0,0]},"k":1}`, `"vectr"`, `"vector"`},
		{"Analyze", "/v1/table/t/analyze_plan", `{"k":1,"colums":{"column_names":["id"]}}`, `"colums"`, `"columns"`},
		{"ExplainQuery", "/v1/table/t/explain_plan", `{"query":{"k":1,"fliter":"id > 1"}}`, `"query.fliter"`, `"filter"`},
		{"NoSuggestion", "/v1/table/t/query", `{"k":1,"zzzzzz":1}`, `"zzzzzz"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := s.Do(t, http.MethodPost, tc.path, jsonHeader, []byte(tc.body))
			if status != http.StatusBadRequest || apitest.ErrorCode(body) != int(store.CodeInvalidInput) {
				t.Fatalf("%s: %d %s, want 400 code 13", tc.body, status, body)
			}
			var er struct{ Error string }
			_ = json.Unmarshal(body, &er)
			if !strings.Contains(er.Error, tc.member) || (tc.suggestion != "" && !strings.Contains(er.Error, "did you mean "+tc.suggestion)) {
				t.Fatalf("message %q does not name %s and suggest %s", er.Error, tc.member, tc.suggestion)
			}
		})
	}
}
