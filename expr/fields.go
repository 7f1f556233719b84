package expr

import "fmt"

// Fields returns the distinct field paths that e references, in order of
// first appearance (nil for a nil e).
func Fields(e Expr) [][]string {
	var out [][]string
	seen := map[string]bool{}
	var walk func(Expr)
	walk = func(e Expr) {
		if f, ok := e.(*field); ok {
			key := fmt.Sprintf("%q", f.path)
			if !seen[key] {
				seen[key] = true
				out = append(out, append([]string(nil), f.path...))
			}
		}
		for _, c := range e.children() {
			walk(c)
		}
	}
	if e != nil {
		walk(e)
	}
	return out
}
