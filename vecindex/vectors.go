package vecindex

import (
	"errors"
	"fmt"
	"math"
)

// Vectors is a dense float32 matrix, row-major: Data holds len(IDs)*Dim
// values and IDs[i] is the id of row i. IDs are arbitrary but must be
// unique.
type Vectors struct {
	Dim  int
	Data []float32
	IDs  []int64
}

// ByteVectors is a dense uint8 matrix for hamming distance, laid out like
// Vectors: Data holds len(IDs)*Dim bytes.
type ByteVectors struct {
	Dim  int
	Data []byte
	IDs  []int64
}

// rows returns how many complete rows vs has (0 when Dim is not positive).
func (vs *Vectors) rows() int {
	if vs == nil || vs.Dim <= 0 {
		return 0
	}
	return min(len(vs.IDs), len(vs.Data)/vs.Dim)
}

// rows returns how many complete rows vs has (0 when Dim is not positive).
func (vs *ByteVectors) rows() int {
	if vs == nil || vs.Dim <= 0 {
		return 0
	}
	return min(len(vs.IDs), len(vs.Data)/vs.Dim)
}

// checkBuild returns an error unless vs is a non-empty, consistent matrix of
// finite values.
func (vs *Vectors) checkBuild() error {
	if vs == nil || len(vs.IDs) == 0 {
		return errors.New("vecindex: no vectors to index")
	}
	if vs.Dim <= 0 {
		return fmt.Errorf("vecindex: dimension must be positive, got %d", vs.Dim)
	}
	if len(vs.Data) != len(vs.IDs)*vs.Dim {
		return fmt.Errorf("vecindex: %d values for %d vectors of dimension %d", len(vs.Data), len(vs.IDs), vs.Dim)
	}
	for i, x := range vs.Data {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("vecindex: vector %d has a non-finite value", vs.IDs[i/vs.Dim])
		}
	}
	return nil
}

// checkBuild returns an error unless vs is a non-empty, consistent matrix.
func (vs *ByteVectors) checkBuild() error {
	if vs == nil || len(vs.IDs) == 0 {
		return errors.New("vecindex: no vectors to index")
	}
	if vs.Dim <= 0 {
		return fmt.Errorf("vecindex: dimension must be positive, got %d", vs.Dim)
	}
	if len(vs.Data) != len(vs.IDs)*vs.Dim {
		return fmt.Errorf("vecindex: %d bytes for %d vectors of dimension %d", len(vs.Data), len(vs.IDs), vs.Dim)
	}
	return nil
}
