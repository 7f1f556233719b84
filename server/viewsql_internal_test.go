package server

import (
	"slices"
	"testing"
)

// TestParseSQLView checks which SQL statements are the view form lancens
// runs, the source table they name and the QueryTableRequest they become;
// other statements are not the form (they are stored, not run).
func TestParseSQLView(t *testing.T) {
	for _, tc := range []struct {
		sql     string
		source  []string // nil: not the form
		request string
	}{
		{"SELECT * FROM t", []string{"t"}, `{"id":["t"],"k":0,"vector":null}`},
		{"select a, b from ns.t where a > 1;", []string{"ns", "t"}, `{"id":["ns","t"],"k":0,"vector":null,"filter":"a > 1","columns":{"column_names":["a","b"]}}`},
		{`SELECT b AS x, a * 2 AS "y y", c FROM "my ns".` + "`t`", []string{"my ns", "t"},
			`{"id":["my ns","t"],"k":0,"vector":null,"columns":{"column_aliases":{"x":"b","y y":"a * 2","c":"c"}}}`},
		{"SELECT cast(a AS string) AS s FROM t WHERE name = 'from x where y'", []string{"t"},
			`{"id":["t"],"k":0,"vector":null,"filter":"name = 'from x where y'","columns":{"column_aliases":{"s":"cast(a AS string)"}}}`},
		{"  SELECT\\n a\\nFROM\\tt  ", nil, ""}, // not SQL once escaped: a literal backslash
		{"SELECT\n a\nFROM\tt  ", []string{"t"}, `{"id":["t"],"k":0,"vector":null,"columns":{"column_names":["a"]}}`},
		{"SELECT 1", nil, ""},
		{"SELECT a FROM t GROUP BY a", nil, ""},
		{"SELECT a FROM t, u", nil, ""},
		{"SELECT a FROM t JOIN u ON t.a = u.a", nil, ""},
		{"SELECT a FROM t WHERE", nil, ""},
		{"SELECT a FROM t WHERE a >", nil, ""},
		{"SELECT a AS FROM t", nil, ""},
		{"SELECT FROM t", nil, ""},
		{"WITH x AS (SELECT a FROM t) SELECT a FROM x", nil, ""},
		{"selection FROM t", nil, ""},
		{`{"id": ["t"], "k": 0}`, nil, ""},
		{"my own format", nil, ""},
	} {
		v, ok := parseSQLView(tc.sql)
		if ok != (tc.source != nil) || !slices.Equal(v.source, tc.source) || string(v.request) != tc.request {
			t.Errorf("parseSQLView(%q) = %v %q, %v; want %v %q", tc.sql, v.source, v.request, ok, tc.source, tc.request)
		}
	}
}

// TestViewSource checks the source table access control reads from a
// source_query: the id of a QueryTableRequest, the table of SQL, none for
// anything else.
func TestViewSource(t *testing.T) {
	for query, want := range map[string][]string{
		`{"id": ["ns", "t"], "k": 0}`:  {"ns", "t"},
		"SELECT a FROM ns.t WHERE a>1": {"ns", "t"},
		`{"sql": "SELECT a FROM t"}`:   nil,
		"SELECT a FROM t GROUP BY a":   nil,
		"anything":                     nil,
	} {
		if got := viewSource(query); !slices.Equal(got, want) {
			t.Errorf("viewSource(%q) = %v, want %v", query, got, want)
		}
	}
}
