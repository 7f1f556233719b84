package v21

// block is a run of decoded values: what a compressive encoding turns its
// buffers back into. Exactly one of its shapes is in use:
//
//   - fixed width: n values of bits bits each in data (bits is 1 for
//     booleans, packed LSB first, otherwise a multiple of 8);
//   - variable width: n values, value i being data[offsets[i]:offsets[i+1]];
//   - fixed-size list: n rows, each of fsl[0].dim × fsl[1].dim × … items
//     held in the fixed-width shape (n then counts rows, items are
//     n × dims), with an optional validity bitmap per layer;
//   - constant: n copies of the one value in data (scalar is set);
//   - all null: n values that are all null (null is set).
type block struct {
	n       int
	bits    int
	data    []byte
	offsets []int64
	fsl     []fslLayer
	scalar  bool
	null    bool
	// packed, for the rows of a packed struct (each bits wide), is the
	// width of each field, in order.
	packed []int
}

// fslLayer is one fixed-size-list layer of a block: its dimension and,
// when its items may be null, their validity (one bit per item of this
// layer, LSB first).
type fslLayer struct {
	dim      int
	validity []byte
}

func (b *block) variable() bool { return b.offsets != nil }

// items is the number of innermost items: n times every FSL dimension.
func (b *block) items() int {
	n := b.n
	for _, l := range b.fsl {
		n *= l.dim
	}
	return n
}

// blockAppender concatenates blocks of the same shape, chunk after chunk.
type blockAppender struct {
	out     block
	started bool
	bud     budget
	// values and bytes size the first allocation (the run's chunks).
	values, bytes int
}

func (a *blockAppender) append(b *block) error {
	if !a.started {
		a.started = true
		a.out = block{bits: b.bits, scalar: b.scalar, null: b.null, packed: b.packed, data: make([]byte, 0, a.bytes)}
		if b.variable() {
			a.out.offsets = make([]int64, 1, a.values+1)
		}
		for _, l := range b.fsl {
			a.out.fsl = append(a.out.fsl, fslLayer{dim: l.dim, validity: nil})
		}
		for i, l := range b.fsl {
			if l.validity != nil {
				a.out.fsl[i].validity = []byte{}
			}
		}
	}
	o := &a.out
	if b.variable() != o.variable() || b.bits != o.bits || len(b.fsl) != len(o.fsl) || b.null != o.null || b.scalar != o.scalar {
		return corrupt("chunks of one page decode to values of different shapes")
	}
	if b.null {
		o.n += b.n
		return nil
	}
	switch {
	case b.variable():
		if err := a.bud.take(uint64(len(b.data))+8*uint64(b.n), "values"); err != nil {
			return err
		}
		base := o.offsets[len(o.offsets)-1] - b.offsets[0]
		for _, off := range b.offsets[1:] {
			o.offsets = append(o.offsets, off+base)
		}
		o.data = append(o.data, b.data[b.offsets[0]:b.offsets[b.n]]...)
	case b.bits == 1:
		if err := a.bud.take(uint64(b.n+7)/8, "values"); err != nil {
			return err
		}
		o.data = appendBits(o.data, o.items(), b.data, 0, b.items())
	default:
		if err := a.bud.take(uint64(len(b.data)), "values"); err != nil {
			return err
		}
		o.data = append(o.data, b.data[:b.items()*b.bits/8]...)
	}
	before := o.n
	for i := range b.fsl {
		if b.fsl[i].dim != o.fsl[i].dim || (b.fsl[i].validity == nil) != (o.fsl[i].validity == nil) {
			return corrupt("chunks of one page decode to fixed-size lists of different shapes")
		}
		if v := b.fsl[i].validity; v != nil {
			per := 1
			for _, l := range b.fsl[:i+1] {
				per *= l.dim
			}
			o.fsl[i].validity = appendBits(o.fsl[i].validity, before*per, v, 0, b.n*per)
		}
	}
	o.n += b.n
	return nil
}

func (a *blockAppender) block() *block {
	if !a.started {
		return &block{}
	}
	return &a.out
}
