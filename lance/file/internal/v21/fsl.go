package v21

import "github.com/lancens/lancens/lance/internal/pb/enc21pb"

// fslShape describes fixed-size lists of fixed-width items (vectors) as a
// FixedSizeList encoding nests them: the layers from the outermost list
// in, then the items' width.
type fslShape struct {
	layers   []fslShapeLayer
	itemBits int
}

type fslShapeLayer struct {
	dim         int
	hasValidity bool
}

// maxFSLItems bounds the items in one row of nested fixed-size lists.
const maxFSLItems = 1 << 24

func newFSLShape(f *enc21pb.FixedSizeList) (*fslShape, error) {
	s := &fslShape{}
	items := 1
	for depth := 0; ; depth++ {
		if depth > 8 {
			return nil, unsupported("fixed-size lists nested more than 8 deep")
		}
		dim := f.GetItemsPerValue()
		if dim == 0 || dim > maxFSLItems || uint64(items)*dim > maxFSLItems {
			return nil, corrupt("fixed-size list of %d items", dim)
		}
		items *= int(dim)
		s.layers = append(s.layers, fslShapeLayer{dim: int(dim), hasValidity: f.GetHasValidity()})
		switch c := f.GetValues().GetCompression().(type) {
		case *enc21pb.CompressiveEncoding_FixedSizeList:
			f = c.FixedSizeList
			continue
		case *enc21pb.CompressiveEncoding_Flat:
			bits, err := flatBits(c.Flat)
			if err != nil {
				return nil, err
			}
			if c.Flat.GetData() != nil {
				return nil, unsupported("compressed fixed-size list items")
			}
			s.itemBits = bits
			return s, nil
		default:
			return nil, unsupported("fixed-size list items encoded as %T", c)
		}
	}
}

func (s *fslShape) validityLayers() int {
	n := 0
	for _, l := range s.layers {
		if l.hasValidity {
			n++
		}
	}
	return n
}

// chunk reads a mini-block chunk of n rows: a validity bitmap for each
// layer that has one (outermost first, over that layer's items), then the
// items.
func (s *fslShape) chunk(bufs [][]byte, n int) (*block, error) {
	b := &block{n: n, bits: s.itemBits}
	per, k := n, 0
	for _, l := range s.layers {
		per *= l.dim
		layer := fslLayer{dim: l.dim}
		if l.hasValidity {
			if len(bufs[k]) < (per+7)/8 {
				return nil, corrupt("fixed-size list validity of %d items in %d bytes", per, len(bufs[k]))
			}
			layer.validity = bufs[k][:(per+7)/8]
			k++
		}
		b.fsl = append(b.fsl, layer)
	}
	items, err := fixedBlock(bufs[k], per, s.itemBits)
	if err != nil {
		return nil, err
	}
	b.data = items.data
	return b, nil
}

// zippedBytes is the size of one full-zip value: each layer's validity for
// the row's items, rounded up to bytes, then the items.
func (s *fslShape) zippedBytes() int {
	size, per := 0, 1
	for _, l := range s.layers {
		per *= l.dim
		if l.hasValidity {
			size += (per + 7) / 8
		}
	}
	return size + per*s.itemBits/8
}

// unzip splits n full-zip values (zippedBytes each) into items and
// validity bitmaps.
func (s *fslShape) unzip(data []byte, n int) (*block, error) {
	size := s.zippedBytes()
	if uint64(n)*uint64(size) > uint64(len(data)) {
		return nil, corrupt("%d fixed-size lists of %d bytes in %d bytes", n, size, len(data))
	}
	b := &block{n: n, bits: s.itemBits}
	if s.validityLayers() == 0 {
		b.data = data[:n*size]
		for _, l := range s.layers {
			b.fsl = append(b.fsl, fslLayer{dim: l.dim})
		}
		return b, nil
	}
	per := 1
	for _, l := range s.layers {
		per *= l.dim
		layer := fslLayer{dim: l.dim}
		if l.hasValidity {
			layer.validity = make([]byte, (n*per+7)/8)
		}
		b.fsl = append(b.fsl, layer)
	}
	itemBytes := per * s.itemBits / 8
	b.data = make([]byte, 0, n*itemBytes)
	for i := 0; i < n; i++ {
		row := data[i*size : (i+1)*size]
		off, lper := 0, 1
		for j, l := range s.layers {
			lper *= l.dim
			if !l.hasValidity {
				continue
			}
			v := b.fsl[j].validity
			for k := 0; k < lper; k++ {
				if bitSet(row[off:], k) {
					idx := i*lper + k
					v[idx/8] |= 1 << (idx % 8)
				}
			}
			off += (lper + 7) / 8
		}
		b.data = append(b.data, row[off:off+itemBytes]...)
	}
	return b, nil
}
