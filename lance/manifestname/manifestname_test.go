package manifestname

import "testing"

func TestFileName(t *testing.T) {
	for _, tc := range []struct {
		scheme Scheme
		v      int64
		want   string
	}{
		{V2, 1, "18446744073709551614.manifest"},
		{V2, 42, "18446744073709551573.manifest"},
		{V1, 1, "1.manifest"},
		{V1, 42, "42.manifest"},
		{Parse("v1"), 7, "7.manifest"},
		{Parse("V2"), 7, "18446744073709551608.manifest"},
		{Parse(""), 7, "18446744073709551608.manifest"},
	} {
		if got := tc.scheme.FileName(tc.v); got != tc.want {
			t.Errorf("scheme %d, version %d: %q, want %q", tc.scheme, tc.v, got, tc.want)
		}
	}
}
