package store

import "testing"

func TestParseCommitDurability(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want CommitDurability
		ok   bool
	}{
		{"full", DurabilityFull, true},
		{"FULL", DurabilityFull, true},
		{"process", DurabilityProcess, true},
		{"Process", DurabilityProcess, true},
		{"", 0, false},
		{"normal", 0, false},
		{"none", 0, false},
	} {
		got, err := ParseCommitDurability(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseCommitDurability(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
		if tc.ok {
			if back, err := ParseCommitDurability(got.String()); err != nil || back != got {
				t.Errorf("%v.String() = %q reads back as %v, %v", got, got.String(), back, err)
			}
		}
	}
}
