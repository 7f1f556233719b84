// Package speccheck compares two OpenAPI documents on everything that is
// visible on the wire, ignoring prose. It is how lancens proves that its
// openapi.yaml, written in its own words, is identical in substance to the
// upstream Lance Namespace spec.
package speccheck

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// proseKeys are keywords that carry documentation only.
var proseKeys = []string{"description", "summary", "example", "examples", "title"}

// Diff returns one line per difference between the two YAML documents, after
// dropping prose, the info block and components/examples, and after reading
// OAS 3.0 `nullable: true` as its OAS 3.1 equivalent in both. It returns an
// error if either document is not valid YAML.
func Diff(ours, reference []byte) ([]string, error) {
	a, err := load(ours)
	if err != nil {
		return nil, fmt.Errorf("ours: %w", err)
	}
	b, err := load(reference)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	var diffs []string
	compare("", a, b, &diffs)
	return diffs, nil
}

func load(doc []byte) (map[string]any, error) {
	var raw any
	if err := yaml.Unmarshal(doc, &raw); err != nil {
		return nil, err
	}
	root, ok := normalize(raw, false).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a YAML mapping")
	}
	delete(root, "info")
	if comps, ok := root["components"].(map[string]any); ok {
		delete(comps, "examples")
	}
	return root, nil
}

// normalize converts mapping keys to strings, drops prose keywords and
// rewrites nullability. names is true while walking a mapping whose keys
// are names (schema properties), where "description" is a property, not a
// keyword.
func normalize(v any, names bool) any {
	switch v := v.(type) {
	case map[string]any:
		return normalizeMap(v, names)
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, val := range v {
			m[fmt.Sprint(k)] = val
		}
		return normalizeMap(m, names)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalize(e, false)
		}
		return out
	}
	return v
}

func normalizeMap(m map[string]any, names bool) map[string]any {
	out := make(map[string]any, len(m))
	for k, val := range m {
		if !names && slices.Contains(proseKeys, k) {
			// "title" is prose in a schema but a required field of info and
			// of an Overlay; info is dropped anyway.
			continue
		}
		out[k] = normalize(val, !names && k == "properties")
	}
	if names {
		return out
	}
	if nullable, _ := out["nullable"].(bool); nullable {
		delete(out, "nullable")
		switch t := out["type"].(type) {
		case string:
			out["type"] = []any{t, "null"}
			if enum, ok := out["enum"].([]any); ok && !slices.Contains(enum, any(nil)) {
				out["enum"] = append(enum, nil)
			}
		default:
			if ref, ok := out["$ref"]; ok {
				delete(out, "$ref")
				out["oneOf"] = []any{map[string]any{"type": "null"}, map[string]any{"$ref": ref}}
			}
		}
	} else if nullable == false {
		delete(out, "nullable")
	}
	return out
}

// compare appends a line to diffs for every place a and b differ.
func compare(path string, a, b any, diffs *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			p := path + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			av, ain := am[k]
			bv, bin := bm[k]
			switch {
			case !ain:
				*diffs = append(*diffs, fmt.Sprintf("%s: missing in ours (reference has %v)", p, brief(bv)))
			case !bin:
				*diffs = append(*diffs, fmt.Sprintf("%s: not in the reference (ours has %v)", p, brief(av)))
			default:
				compare(p, av, bv, diffs)
			}
		}
		return
	}
	al, alok := a.([]any)
	bl, blok := b.([]any)
	if alok && blok && len(al) == len(bl) {
		for i := range al {
			compare(fmt.Sprintf("%s/%d", path, i), al[i], bl[i], diffs)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*diffs = append(*diffs, fmt.Sprintf("%s: ours %v, reference %v", path, brief(a), brief(b)))
	}
}

func brief(v any) string {
	s := fmt.Sprintf("%v", v)
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
