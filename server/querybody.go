package server

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/lancens/lancens/internal/closest"
)

// Query bodies (QueryTable, AnalyzeTableQueryPlan, and the query of
// ExplainTableQueryPlan) get two adjustments before they are validated.
//
// The spec's QueryTableRequest requires vector and k, so that a plain scan
// must send "vector": null and a k. openapi.yaml keeps that required list
// (it is wire-identical to the spec, and clients that follow it send
// both), but lancens reads an absent vector as null (no vector search)
// and an absent k as 0 (a scan's every row, a search's default of 10):
// `{"filter": "id > 3"}` is a scan. A body that follows the spec is read
// exactly as before.
//
// A member the request type does not have is refused (code 13), naming it
// and the member it most likely meant: the spec does not forbid unknown
// members, and a typo ("filters") would otherwise be ignored, or reported
// as some other member missing. Requests in the LanceDB remote dialect are
// left alone: the SDK sends members of its own (minimum_nprobes, …).

// queryBodies are the operations whose bodies are query requests; the
// value is the member holding the query, "" for the body itself.
var queryBodies = map[string]string{
	"QueryTable":            "",
	"AnalyzeTableQueryPlan": "",
	"ExplainTableQueryPlan": "query",
}

// queryExtensions are the members lancens reads in a query beyond the
// spec's: order_by (a scan's sort order, which the LanceDB SDK sends).
var queryExtensions = []string{"order_by"}

// adjustQueryBody returns body with an absent vector and k filled in, for
// a query operation op. With strict, a member the request type does not
// have is InvalidInput (13). Other bodies, and bodies that are not JSON
// objects (the validator reports those), are returned as they are.
func adjustQueryBody(op *operation, body []byte, strict bool) ([]byte, error) {
	member, ok := queryBodies[op.id]
	if !ok {
		return body, nil
	}
	schema := jsonBodySchema(op)
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || top == nil || schema == nil {
		return body, nil
	}
	if strict {
		if err := knownMembers(top, schema, ""); err != nil {
			return nil, err
		}
	}
	if member == "" {
		return fillQuery(top, body), nil
	}
	inner, ok := top[member]
	if !ok {
		return body, nil
	}
	var q map[string]json.RawMessage
	if json.Unmarshal(inner, &q) != nil || q == nil {
		return body, nil
	}
	if strict {
		if s := schema.Properties[member]; s != nil && s.Value != nil {
			if err := knownMembers(q, s.Value, member+"."); err != nil {
				return nil, err
			}
		}
	}
	top[member] = fillQuery(q, inner)
	return json.Marshal(top)
}

// fillQuery returns the query object raw (whose members are q) with
// "vector": null and "k": 0 put in where absent.
func fillQuery(q map[string]json.RawMessage, raw []byte) []byte {
	var add []string
	if _, ok := q["vector"]; !ok {
		add = append(add, `"vector":null`)
	}
	if _, ok := q["k"]; !ok {
		add = append(add, `"k":0`)
	}
	if len(add) == 0 {
		return raw
	}
	raw = bytes.TrimSpace(raw)
	sep := ","
	if len(q) == 0 {
		sep = ""
	}
	out := []byte("{" + strings.Join(add, ",") + sep)
	return append(out, raw[1:]...)
}

// knownMembers returns InvalidInput (13) for the first member of obj (in
// name order) that schema does not have, naming the closest one it does.
func knownMembers(obj map[string]json.RawMessage, schema *openapi3.Schema, prefix string) error {
	known := append(slices.Sorted(maps.Keys(schema.Properties)), queryExtensions...)
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !slices.Contains(known, k) {
			return invalidInput("request body: unknown member %q%s", prefix+k, closest.Hint(k, known))
		}
	}
	return nil
}

// jsonBodySchema returns the schema of op's JSON request body, nil when it
// has none.
func jsonBodySchema(op *operation) *openapi3.Schema {
	rb := op.route.Operation.RequestBody
	if rb == nil || rb.Value == nil {
		return nil
	}
	mt := rb.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	return mt.Schema.Value
}
