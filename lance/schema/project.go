package schema

import (
	"fmt"
	"maps"
	"strings"
)

// ParsePath splits a field path into names: names are separated by ".",
// and a name holding "." or "`" is written between backticks, a backtick
// inside doubled ("a.`b.c`.d" is a, b.c, d). It returns an error wrapping
// ErrInvalid for an empty path or name, or a misplaced or unclosed quote.
func ParsePath(path string) ([]string, error) {
	bad := func(why string) ([]string, error) {
		return nil, fmt.Errorf("%w: field path %q: %s", ErrInvalid, path, why)
	}
	if path == "" {
		return bad("empty")
	}
	var names []string
	for i := 0; ; {
		var name strings.Builder
		if i < len(path) && path[i] == '`' {
			i++
			for {
				j := strings.IndexByte(path[i:], '`')
				if j < 0 {
					return bad("unclosed quote")
				}
				name.WriteString(path[i : i+j])
				i += j + 1
				if i < len(path) && path[i] == '`' {
					name.WriteByte('`')
					i++
					continue
				}
				break
			}
			if i < len(path) && path[i] != '.' {
				return bad("a quoted name is followed by more than \".\"")
			}
		} else {
			j := strings.IndexByte(path[i:], '.')
			if j < 0 {
				j = len(path) - i
			}
			if strings.IndexByte(path[i:i+j], '`') >= 0 {
				return bad("a quote inside a name")
			}
			name.WriteString(path[i : i+j])
			i += j
		}
		if name.Len() == 0 {
			return bad("empty name")
		}
		names = append(names, name.String())
		if i == len(path) {
			return names, nil
		}
		i++ // the "."
		if i == len(path) {
			return bad("empty name")
		}
	}
}

// FormatPath joins names into a field path that ParsePath splits back.
func FormatPath(names ...string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		if strings.ContainsAny(n, ".`") {
			n = "`" + strings.ReplaceAll(n, "`", "``") + "`"
		}
		quoted[i] = n
	}
	return strings.Join(quoted, ".")
}

// Project returns the schema of the fields at paths, each with all its
// descendants and with its ancestors (holding only the children chosen).
// Top-level fields come in the order paths first name them; children keep
// their order in s. The fields are copies; metadata carries over. It
// returns an error wrapping ErrFieldNotFound for a path s lacks, or
// ErrInvalid for a malformed path.
func (s *Schema) Project(paths ...string) (*Schema, error) {
	var chains [][]*Field
	for _, p := range paths {
		names, err := ParsePath(p)
		if err != nil {
			return nil, err
		}
		chain, fields := []*Field(nil), s.Fields
		for _, name := range names {
			var found *Field
			for _, f := range fields {
				if f.Name == name {
					found = f
					break
				}
			}
			if found == nil {
				return nil, fmt.Errorf("%w: %s", ErrFieldNotFound, p)
			}
			chain = append(chain, found)
			fields = found.Children
		}
		chains = append(chains, chain)
	}
	return s.projectChains(chains), nil
}

// ProjectIDs returns the schema of the fields with ids, as Project does
// (top-level fields in the order ids first reach them). It returns an
// error wrapping ErrFieldNotFound for an id s lacks.
func (s *Schema) ProjectIDs(ids ...int32) (*Schema, error) {
	var chains [][]*Field
	for _, id := range ids {
		var chain []*Field
		var find func(fields []*Field) bool
		find = func(fields []*Field) bool {
			for _, f := range fields {
				chain = append(chain, f)
				if f.ID == id || find(f.Children) {
					return true
				}
				chain = chain[:len(chain)-1]
			}
			return false
		}
		if !find(s.Fields) {
			return nil, fmt.Errorf("%w: id %d", ErrFieldNotFound, id)
		}
		chains = append(chains, chain)
	}
	return s.projectChains(chains), nil
}

// projectChains builds a projection from chains of fields, each from a
// top-level field down to a chosen one.
func (s *Schema) projectChains(chains [][]*Field) *Schema {
	whole := map[*Field]bool{} // chosen: kept with every descendant
	part := map[*Field]bool{}  // ancestors of chosen fields
	var order []*Field
	seen := map[*Field]bool{}
	for _, chain := range chains {
		for _, f := range chain[:len(chain)-1] {
			part[f] = true
		}
		whole[chain[len(chain)-1]] = true
		if top := chain[0]; !seen[top] {
			seen[top] = true
			order = append(order, top)
		}
	}
	var cut func(f *Field) *Field
	cut = func(f *Field) *Field {
		if whole[f] {
			return f.Clone()
		}
		c := *f
		c.Metadata = maps.Clone(f.Metadata)
		c.Children = nil
		for _, ch := range f.Children {
			if whole[ch] || part[ch] {
				c.Children = append(c.Children, cut(ch))
			}
		}
		return &c
	}
	out := &Schema{Metadata: maps.Clone(s.Metadata)}
	for _, f := range order {
		out.Fields = append(out.Fields, cut(f))
	}
	return out
}
