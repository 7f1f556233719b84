package v21

import (
	"fmt"

	"github.com/lancens/lancens/lance/file/internal/compression"
)

// withFSST returns the variable-width block in marked as compressed with
// table t, for its values to be decoded when they are gathered; a table
// that says the values are not compressed returns in.
func withFSST(t *compression.FSST, in *block) (*block, error) {
	if !t.Compressed() {
		return in, nil
	}
	if !in.variable() || len(in.offsets) != in.n+1 {
		return nil, corrupt("FSST over fixed-width values")
	}
	if in.fsst != nil {
		return nil, unsupported("FSST over FSST")
	}
	out := *in
	out.fsst = t
	return &out, nil
}

// decodeFSST decompresses the variable-width block in (one FSST value per
// value) with table t into a new variable-width block, charging its size
// to bud; a table that says the values are not compressed returns in.
func decodeFSST(t *compression.FSST, in *block, bud budget) (*block, error) {
	if !t.Compressed() {
		return in, nil
	}
	if !in.variable() || len(in.offsets) != in.n+1 {
		return nil, corrupt("FSST over fixed-width values")
	}
	data, offsets, err := t.DecodeValues(in.data, in.offsets, bud.b)
	if err != nil {
		return nil, fmt.Errorf("FSST values: %w", err)
	}
	return &block{n: in.n, offsets: offsets, data: data}, nil
}
