package client

import (
	"iter"
)

// paginate turns a page-at-a-time listing into an iterator. It yields an
// Internal error if the server hands back a token it already gave, which
// would otherwise loop forever.
func paginate[T any](page func(token string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		seen := map[string]bool{}
		token := ""
		for {
			items, next, err := page(token)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, item := range items {
				if !yield(item, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			if seen[next] {
				yield(zero, errorf(CodeInternal, "server repeated page token %q", next))
				return
			}
			seen[next] = true
			token = next
		}
	}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// propertiesOf returns a non-nil map for a possibly absent properties field.
func propertiesOf(p *map[string]string) map[string]string {
	if p == nil || *p == nil {
		return map[string]string{}
	}
	return *p
}

// errMissing reports a 2xx response that lacks a field the API requires.
func errMissing(field string) error {
	return errorf(CodeInternal, "the server's response has no %s", field)
}
