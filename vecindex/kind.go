package vecindex

import (
	"fmt"
	"strings"
)

// Kind is an index type.
type Kind int

// The index types.
const (
	// IVFFlat keeps the vectors unquantised: its distances are exact.
	IVFFlat Kind = iota
	// IVFPQ product-quantises the residuals of the vectors.
	IVFPQ
	// IVFSQ scalar-quantises the residuals of the vectors to 8 bits.
	IVFSQ
	// IVFHNSWSQ searches an HNSW graph per partition over IVF_SQ codes.
	IVFHNSWSQ
	// IVFHNSWPQ searches an HNSW graph per partition over IVF_PQ codes.
	IVFHNSWPQ
)

var kindNames = [...]string{"IVF_FLAT", "IVF_PQ", "IVF_SQ", "IVF_HNSW_SQ", "IVF_HNSW_PQ"}

// String returns the Lance name of k, such as "IVF_PQ".
func (k Kind) String() string {
	if k.valid() {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

func (k Kind) valid() bool { return k >= IVFFlat && k <= IVFHNSWPQ }

// ParseKind parses an index type name such as "IVF_HNSW_SQ",
// case-insensitively. It returns an error for any other name.
func ParseKind(s string) (Kind, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	for k, name := range kindNames {
		if u == name {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("vecindex: unknown index type %q", s)
}

func (k Kind) usesPQ() bool   { return k == IVFPQ || k == IVFHNSWPQ }
func (k Kind) usesSQ() bool   { return k == IVFSQ || k == IVFHNSWSQ }
func (k Kind) usesHNSW() bool { return k == IVFHNSWSQ || k == IVFHNSWPQ }

// targetPartitionSize returns Lance's default number of rows per partition
// for the kind, used when neither NumPartitions nor TargetPartitionSize is
// set.
func (k Kind) targetPartitionSize() int {
	switch k {
	case IVFFlat:
		return 4096
	case IVFHNSWSQ, IVFHNSWPQ:
		return 1 << 20
	}
	return 8192
}
