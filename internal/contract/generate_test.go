package contract

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

func validator(t *testing.T) *Validator {
	t.Helper()
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSampleConforms checks that the sample of every JSON request body of
// the spec is accepted by its schema, and that every mutation of it with a
// value is rejected by at least one of its candidates.
func TestSampleConforms(t *testing.T) {
	v := validator(t)
	ops := v.operations()
	if len(ops) != 54 {
		t.Fatalf("%d operations in the spec, want 54", len(ops))
	}
	for id, op := range ops {
		rb := op.op.RequestBody
		if rb == nil || rb.Value == nil || rb.Value.Content[mimeJSON] == nil {
			continue
		}
		schema := rb.Value.Content[mimeJSON].Schema.Value
		body := deepCopy(sample(schema, 0))
		if err := schema.VisitJSON(body); err != nil {
			t.Errorf("%s: the sample %v is invalid: %v", id, body, err)
			continue
		}
		for _, m := range mutations(schema, body, nil, 0) {
			rejected := false
			candidates := m.values
			if m.remove {
				candidates = []any{nil}
			}
			for _, val := range candidates {
				if schema.VisitJSON(deepCopy(apply(body, m.path, val, m.remove))) != nil {
					rejected = true
				}
			}
			if !rejected && m.remove {
				t.Errorf("%s: removing %v leaves a valid body", id, m.path)
			}
		}
	}
}

func TestMutations(t *testing.T) {
	v := validator(t)
	schema := v.doc.Components.Schemas["CreateTableIndexRequest"].Value
	body := map[string]any{"column": "c", "index_type": "BTREE"}
	var names []string
	for _, m := range mutations(schema, body, nil, 0) {
		names = append(names, m.name)
	}
	for _, want := range []string{"WrongType/column", "MissingRequired/column", "MissingRequired/index_type", "WrongType/num_partitions", "WrongType/id"} {
		if !slices.Contains(names, want) {
			t.Errorf("mutations %q lack %s", names, want)
		}
	}
	if slices.Contains(names, "MissingRequired/name") {
		t.Errorf("an optional member is mutated as required: %q", names)
	}
	// Members of objects in arrays are walked too.
	schema = v.doc.Components.Schemas["BatchDeleteTableVersionsRequest"].Value
	body = map[string]any{"ranges": []any{map[string]any{"start_version": 1, "end_version": 2}}}
	var found bool
	for _, m := range mutations(schema, body, nil, 0) {
		if m.name == "MissingRequired/ranges/0/end_version" {
			found = true
			got, _ := json.Marshal(apply(body, m.path, nil, true))
			if string(got) != `{"ranges":[{"start_version":1}]}` {
				t.Errorf("removing %v gave %s", m.path, got)
			}
		}
	}
	if !found {
		t.Error("no mutation of the members of array items")
	}
}

func TestMerge(t *testing.T) {
	got := merge(map[string]any{"a": 1, "o": map[string]any{"x": 1, "y": 2}}, map[string]any{"o": map[string]any{"y": 3}, "b": true})
	b, _ := json.Marshal(got)
	if string(b) != `{"a":1,"b":true,"o":{"x":1,"y":3}}` {
		t.Fatalf("merge gave %s", b)
	}
}

// TestTrailingJSONVariant checks that every JSON operation gets an invalid
// variant whose body is the valid one followed by more text, and Arrow
// operations none.
func TestTrailingJSONVariant(t *testing.T) {
	v := validator(t)
	for _, tc := range []struct {
		op   string
		want bool
	}{{"CreateNamespace", true}, {"DescribeTable", true}, {"InsertIntoTable", false}} {
		op := v.operations()[tc.op]
		valid, err := validRequest(op, call{id: []string{"ns", "t"}, arrow: []byte("arrow")})
		if err != nil {
			t.Fatal(err)
		}
		var found *variant
		for _, vr := range invalidRequests(v, op, valid, "http://127.0.0.1:1") {
			if vr.name == "TrailingJSON" {
				found = &vr
			}
		}
		switch {
		case found == nil && tc.want:
			t.Errorf("%s has no TrailingJSON variant", tc.op)
		case found != nil && !tc.want:
			t.Errorf("%s has a TrailingJSON variant", tc.op)
		case found != nil && string(found.req.body) != string(valid.body)+" x":
			t.Errorf("%s: TrailingJSON body %q, want %q", tc.op, found.req.body, string(valid.body)+" x")
		}
	}
}

// TestValidatorDialectRoutes checks how answers on the remote dialect's
// prewarm route, which the spec lacks, are judged: {} or an ErrorResponse
// whose code fits its status.
func TestValidatorDialectRoutes(t *testing.T) {
	v := validator(t)
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	for _, tc := range []struct {
		name, method, path string
		status             int
		body               string
		ok                 bool
	}{
		{"Success", "POST", "/v1/table/t/index/i/prewarm", 200, `{}`, true},
		{"SuccessTrailingSlash", "POST", "/v1/table/t/index/i/prewarm/", 200, `{}`, true},
		{"SuccessWithMembers", "POST", "/v1/table/t/index/i/prewarm", 200, `{"a":1}`, false},
		{"IndexNotFound", "POST", "/v1/table/t/index/i/prewarm", 404, `{"code":6}`, true},
		{"NotBuilt", "POST", "/v1/table/t/index/i/prewarm", 409, `{"code":19}`, true},
		{"WrongCode", "POST", "/v1/table/t/index/i/prewarm", 409, `{"code":13}`, false},
		{"OtherRouteSuccess", "POST", "/v1/table/t/index/i/warm", 200, `{}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Check(httptest.NewRequest(tc.method, tc.path, nil), tc.status, jsonCT, []byte(tc.body))
			if (err == nil) != tc.ok {
				t.Fatalf("Check = %v, want ok: %v", err, tc.ok)
			}
		})
	}
}
