package contract

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// bogusEnum is the value the checks send where the spec enumerates values.
const bogusEnum = "lancens-conformance-bogus"

// types returns the JSON types a schema declares, without "null".
func types(s *openapi3.Schema) []string {
	if s.Type == nil {
		return nil
	}
	var out []string
	for _, t := range *s.Type {
		if t != openapi3.TypeNull {
			out = append(out, t)
		}
	}
	return out
}

// alternative returns the first alternative of a oneOf or anyOf that is
// not just null, or s itself.
func alternative(s *openapi3.Schema) *openapi3.Schema {
	for _, alts := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf, s.AllOf} {
		for _, a := range alts {
			if a.Value != nil && !(len(types(a.Value)) == 0 && a.Value.Type != nil) {
				return a.Value
			}
		}
	}
	return s
}

// sample returns a value schema s accepts, with only the required members
// of objects: the first enum value, else a value of the first declared
// type.
func sample(s *openapi3.Schema, depth int) any {
	s = alternative(s)
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	if s.Default != nil {
		return s.Default
	}
	ts := types(s)
	if len(ts) == 0 {
		if len(s.Properties) > 0 {
			ts = []string{openapi3.TypeObject}
		} else {
			return "conformance"
		}
	}
	switch ts[0] {
	case openapi3.TypeString:
		if s.Format == "date-time" {
			return time.Now().UTC().Format(time.RFC3339)
		}
		return "conformance"
	case openapi3.TypeInteger:
		if s.Min != nil && *s.Min > 1 {
			return int64(*s.Min)
		}
		return int64(1)
	case openapi3.TypeNumber:
		return 1.5
	case openapi3.TypeBoolean:
		return false
	case openapi3.TypeArray:
		out := []any{}
		if s.Items != nil && s.Items.Value != nil && s.MinItems > 0 && depth < 6 {
			for range s.MinItems {
				out = append(out, sample(s.Items.Value, depth+1))
			}
		}
		return out
	}
	out := map[string]any{}
	if depth < 6 {
		for _, name := range s.Required {
			if p := s.Properties[name]; p != nil && p.Value != nil {
				out[name] = sample(p.Value, depth+1)
			}
		}
	}
	return out
}

// wrongValues returns values of other JSON types than schema s declares,
// most telling first: the checks send the first that makes the request
// invalid.
func wrongValues(s *openapi3.Schema) []any {
	s = alternative(s)
	ts := types(s)
	all := []any{"conformance", int64(12345), true, []any{"x"}, map[string]any{"x": "y"}}
	if len(ts) == 0 {
		return all
	}
	var out []any
	for _, v := range all {
		if !slices.Contains(ts, jsonType(v)) && !(jsonType(v) == openapi3.TypeInteger && slices.Contains(ts, openapi3.TypeNumber)) {
			out = append(out, v)
		}
	}
	return out
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return openapi3.TypeString
	case int64:
		return openapi3.TypeInteger
	case bool:
		return openapi3.TypeBoolean
	case []any:
		return openapi3.TypeArray
	}
	return openapi3.TypeObject
}

// mutation is one way to make a JSON body invalid.
type mutation struct {
	// name says what is wrong: "WrongType/properties/owner".
	name string
	// path is where in the body, as object keys and array indexes.
	path []string
	// values are the candidates to put there (nil with remove).
	values []any
	remove bool
}

// mutations lists the invalid variants of body under schema s: for every
// member the schema declares (and every member of a map it types), a value
// of the wrong type, its absence when required, and a value outside its
// enum; members that are objects, or arrays of objects, are walked too.
func mutations(s *openapi3.Schema, body any, path []string, depth int) []mutation {
	s = alternative(s)
	obj, _ := body.(map[string]any)
	if obj == nil || depth > 4 {
		return nil
	}
	members := map[string]*openapi3.Schema{}
	for name, p := range s.Properties {
		if p.Value != nil {
			members[name] = p.Value
		}
	}
	if ap := s.AdditionalProperties.Schema; ap != nil && ap.Value != nil {
		for name := range obj {
			if _, ok := members[name]; !ok {
				members[name] = ap.Value
			}
		}
	}
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	slices.Sort(names)
	var out []mutation
	for _, name := range names {
		ms := alternative(members[name])
		at := append(slices.Clone(path), name)
		where := strings.Join(at, "/")
		out = append(out, mutation{name: "WrongType/" + where, path: at, values: wrongValues(ms)})
		_, present := obj[name]
		if present && slices.Contains(s.Required, name) {
			out = append(out, mutation{name: "MissingRequired/" + where, path: at, remove: true})
		}
		if len(ms.Enum) > 0 {
			out = append(out, mutation{name: "BadEnum/" + where, path: at, values: []any{bogusEnum}})
		}
		switch v := obj[name].(type) {
		case map[string]any:
			out = append(out, mutations(ms, v, at, depth+1)...)
		case []any:
			if len(v) > 0 && ms.Items != nil && ms.Items.Value != nil {
				out = append(out, mutations(ms.Items.Value, v[0], append(at, "0"), depth+1)...)
			}
		}
	}
	return out
}

// deepCopy copies a JSON value.
func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// apply returns a copy of body with the value at path set to v, or
// removed.
func apply(body any, path []string, v any, remove bool) any {
	out := deepCopy(body)
	parent := out
	for i, key := range path {
		last := i == len(path)-1
		switch p := parent.(type) {
		case map[string]any:
			if last {
				if remove {
					delete(p, key)
				} else {
					p[key] = v
				}
				return out
			}
			parent = p[key]
		case []any:
			n, err := strconv.Atoi(key)
			if err != nil || n >= len(p) {
				return out
			}
			if last {
				p[n] = v
				return out
			}
			parent = p[n]
		default:
			return out
		}
	}
	return out
}

// merge returns base with the members of over set, recursively for
// objects in both.
func merge(base, over map[string]any) map[string]any {
	out, _ := deepCopy(base).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range over {
		if bm, ok := out[k].(map[string]any); ok {
			if om, ok := v.(map[string]any); ok {
				out[k] = merge(bm, om)
				continue
			}
		}
		out[k] = deepCopy(v)
	}
	return out
}
