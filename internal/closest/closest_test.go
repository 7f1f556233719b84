package closest

import "testing"

func TestName(t *testing.T) {
	keys := []string{"aws_endpoint", "aws_region", "allow_http", "filter", "vector", "k"}
	for _, tc := range []struct {
		word, want string
		ok         bool
	}{
		{"aws_endpont", "aws_endpoint", true},
		{"AWS_REGOIN", "aws_region", true},
		{"filters", "filter", true},
		{"vectr", "vector", true},
		{"kk", "k", true},
		{"allow_https", "allow_http", true},
		{"zzz", "", false},
		{"completely_unrelated", "", false},
	} {
		got, ok := Name(tc.word, keys)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Name(%q) = %q, %v; want %q, %v", tc.word, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := Name("x", nil); ok {
		t.Error("a suggestion from no candidates")
	}
	if h := Hint("filtr", keys); h != ` (did you mean "filter"?)` {
		t.Errorf("Hint = %q", h)
	}
	if h := Hint("zzz", keys); h != "" {
		t.Errorf("Hint = %q", h)
	}
}
