package vecindex

import (
	"fmt"
	"strings"
)

// Metric is a distance type.
type Metric int

// The distance types.
const (
	// L2 is the squared euclidean distance.
	L2 Metric = iota
	// Cosine is 1 − cos_sim, in [0, 2].
	Cosine
	// Dot is the negated dot product: smaller is more similar.
	Dot
	// Hamming is the number of differing bits of uint8 vectors.
	Hamming
)

// String returns the Lance name of m ("l2", "cosine", "dot", "hamming").
func (m Metric) String() string {
	switch m {
	case L2:
		return "l2"
	case Cosine:
		return "cosine"
	case Dot:
		return "dot"
	case Hamming:
		return "hamming"
	}
	return fmt.Sprintf("Metric(%d)", int(m))
}

func (m Metric) valid() bool { return m >= L2 && m <= Hamming }

// ParseMetric parses a distance type name, case-insensitively: "l2" or
// "euclidean", "cosine", "dot" or "inner_product", "hamming". It returns an
// error for any other name.
func ParseMetric(s string) (Metric, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "l2", "euclidean":
		return L2, nil
	case "cosine":
		return Cosine, nil
	case "dot", "inner_product":
		return Dot, nil
	case "hamming":
		return Hamming, nil
	}
	return 0, fmt.Errorf("vecindex: unknown distance type %q", s)
}
