package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lancens/lancens/gen/apiclient"
)

func TestCheckResponse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   error // nil: success
	}{
		{"OK", 200, `{}`, nil},
		{"Coded", 404, `{"code":4,"error":"table t not found"}`, ErrTableNotFound},
		{"CodeWinsOverStatus", 400, `{"code":1}`, ErrNamespaceNotFound},
		{"PlainText", 502, `bad gateway`, ErrInternal},
		{"NoCode", 404, `{"error":"x"}`, ErrInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hr := &http.Response{StatusCode: tc.status, Status: http.StatusText(tc.status), Header: http.Header{"X-Request-Id": {"r1"}}}
			err := checkResponse(hr, []byte(tc.body))
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.StatusCode != tc.status || ce.RequestID != "r1" {
				t.Fatalf("error %#v lacks status or request id", err)
			}
		})
	}
}

func TestPaginate(t *testing.T) {
	pages := map[string][]string{"": {"a", "b"}, "t1": {"c"}, "t2": {"d"}}
	next := map[string]string{"": "t1", "t1": "t2", "t2": ""}
	var got []string
	for v, err := range paginate(func(tok string) ([]string, string, error) { return pages[tok], next[tok], nil }) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("got %q", got)
	}
	// A server that repeats a token must not loop forever.
	var last error
	n := 0
	for _, err := range paginate(func(string) ([]string, string, error) { return []string{"x"}, "same", nil }) {
		n++
		last = err
		if n > 10 {
			break
		}
	}
	if !errors.Is(last, ErrInternal) {
		t.Fatalf("repeated token: last error %v after %d items", last, n)
	}
}

func TestPathID(t *testing.T) {
	c, err := New("http://x")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   []string
		want string
		ok   bool
	}{
		{[]string{}, "$", true},
		{[]string{"a", "b"}, "a$b", true},
		{[]string{"a$b"}, "", false},
		{[]string{""}, "", false},
		{[]string{"a", "."}, "", false},
		{[]string{".."}, "", false},
		{[]string{"..."}, "...", true},
	} {
		got, err := c.pathID(tc.id)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("pathID(%q) = %q, %v", tc.id, got, err)
		}
	}
	for _, d := range []string{"", ".", ".."} {
		if _, err := New("http://x", WithDelimiter(d)); err == nil {
			t.Errorf("New accepted the delimiter %q", d)
		}
	}
}

func TestNewValidatesURL(t *testing.T) {
	for _, tc := range []struct {
		url, want string // want "": New fails
	}{
		{"http://localhost:2333", "http://localhost:2333"},
		{"http://localhost:2333/", "http://localhost:2333"},
		{"https://lance.example.com/v1", "https://lance.example.com"},
		{"https://lance.example.com/v1/", "https://lance.example.com"},
		{"http://proxy/lance/v1", "http://proxy/lance"},
		{"http://proxy/lance", "http://proxy/lance"},
		{"localhost:2333", ""},
		{"ftp://host", ""},
		{"http://", ""},
		{"http://host?x=1", ""},
		{"http://user:pw@host", ""},
		{"http://host/#frag", ""},
		{"://bad", ""},
	} {
		t.Run(tc.url, func(t *testing.T) {
			c, err := New(tc.url)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("New accepted %q", tc.url)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.api.ClientInterface.(*apiclient.Client).Server; strings.TrimSuffix(got, "/") != tc.want {
				t.Fatalf("server %q, want %q", got, tc.want)
			}
		})
	}
	for _, opt := range []Option{WithDelimiter(""), WithRetry(RetryPolicy{MaxRetries: -1}), WithRetry(RetryPolicy{BaseDelay: time.Second, MaxDelay: time.Millisecond}), WithHTTPClient(nil)} {
		if _, err := New("http://host", opt); err == nil {
			t.Error("New accepted an invalid option")
		}
	}
}

// TestErrorSentinels checks that every Lance error code 0–23 an answer
// carries matches its sentinel, and no other, with the status and message
// on the *Error.
func TestErrorSentinels(t *testing.T) {
	sentinels := []error{
		ErrUnsupported, ErrNamespaceNotFound, ErrNamespaceAlreadyExists, ErrNamespaceNotEmpty, ErrTableNotFound,
		ErrTableAlreadyExists, ErrTableIndexNotFound, ErrTableIndexAlreadyExists, ErrTableTagNotFound, ErrTableTagAlreadyExists,
		ErrTransactionNotFound, ErrTableVersionNotFound, ErrTableColumnNotFound, ErrInvalidInput, ErrConcurrentModification,
		ErrPermissionDenied, ErrUnauthenticated, ErrServiceUnavailable, ErrInternal, ErrInvalidTableState,
		ErrTableSchemaValidationError, ErrThrottling, ErrTableBranchNotFound, ErrTableBranchAlreadyExists,
	}
	if len(sentinels) != 24 {
		t.Fatalf("%d sentinels", len(sentinels))
	}
	for code := range sentinels {
		t.Run(Code(code).String(), func(t *testing.T) {
			status := 400 + code
			hr := &http.Response{StatusCode: status, Header: http.Header{}}
			err := checkResponse(hr, []byte(fmt.Sprintf(`{"code":%d,"error":"message %d"}`, code, code)))
			for other, s := range sentinels {
				if got := errors.Is(err, s); got != (other == code) {
					t.Errorf("errors.Is(code %d, sentinel of %d) = %v", code, other, got)
				}
			}
			var e *Error
			if !errors.As(err, &e) || e.StatusCode != status || e.Code() != Code(code) || e.Message() != fmt.Sprintf("message %d", code) {
				t.Fatalf("error %#v", err)
			}
			if ErrorCode(err) != Code(code) {
				t.Fatalf("ErrorCode = %d", ErrorCode(err))
			}
		})
	}
}

// TestQueryRequestBody checks the JSON a QueryRequest sends: the spec's
// members, columns in the order given, the client's branch when the
// request names none, and InvalidInput for members that exclude each
// other.
func TestQueryRequestBody(t *testing.T) {
	v := int64(3)
	for _, tc := range []struct {
		name   string
		req    QueryRequest
		branch string
		want   string // "": InvalidInput
	}{
		{"Scan", QueryRequest{}, "", `{"id":["t"],"k":0,"vector":null}`},
		{"Filtered", QueryRequest{Filter: "x > 1", K: 5, Offset: 2, Version: &v, Columns: []string{"b", "a"}},
			"", `{"id":["t"],"k":5,"offset":2,"filter":"x > 1","version":3,"columns":{"column_names":["b","a"]},"vector":null}`},
		{"Aliases", QueryRequest{Aliases: []ColumnAlias{{"z", "a + 1"}, {"y", "b"}}}, "",
			`{"id":["t"],"k":0,"vector":null,"columns":{"column_aliases":{"z":"a + 1","y":"b"}}}`},
		{"Search", QueryRequest{Vector: []float32{1, 0}, K: 2, Nprobes: 4, RefineFactor: 2, Prefilter: Ptr(false), DistanceType: DistanceCosine},
			"", `{"id":["t"],"k":2,"vector":{"single_vector":[1,0]},"nprobes":4,"refine_factor":2,"prefilter":false,"distance_type":"cosine"}`},
		{"Text", QueryRequest{Text: "dogs", TextColumns: []string{"body"}}, "",
			`{"id":["t"],"k":0,"vector":null,"full_text_query":{"string_query":{"query":"dogs","columns":["body"]}}}`},
		{"Structured", QueryRequest{TextQuery: PhraseQuery{Terms: "a b", Slop: 1}}, "",
			`{"id":["t"],"k":0,"vector":null,"full_text_query":{"structured_query":{"query":{"phrase":{"terms":"a b","slop":1}}}}}`},
		{"ClientBranch", QueryRequest{}, "b", `{"id":["t"],"k":0,"vector":null,"branch":"b"}`},
		{"OwnBranch", QueryRequest{Branch: "c"}, "b", `{"id":["t"],"k":0,"vector":null,"branch":"c"}`},
		{"VectorAndVectors", QueryRequest{Vector: []float32{1}, Vectors: [][]float32{{1}}}, "", ""},
		{"ColumnsAndAliases", QueryRequest{Columns: []string{"a"}, Aliases: []ColumnAlias{{"b", "a"}}}, "", ""},
		{"TextAndTextQuery", QueryRequest{Text: "a", TextQuery: MatchQuery{Terms: "a"}}, "", ""},
		{"NegativeLimit", QueryRequest{K: -1}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, err := tc.req.body([]string{"t"}, tc.branch)
			if tc.want == "" {
				if !errors.Is(err, ErrInvalidInput) {
					t.Fatalf("got %v, want InvalidInput", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, got, tc.want) {
				t.Fatalf("sends %s, want %s", got, tc.want)
			}
			if tc.name == "Aliases" && !strings.Contains(string(got), `{"z":"a + 1","y":"b"}`) {
				t.Fatalf("aliases lost their order: %s", got)
			}
		})
	}
}

func sameJSON(t *testing.T, a []byte, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}
