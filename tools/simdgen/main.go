// Command simdgen writes the amd64 assembly of package vecindex/internal/simd with avo:
//
//	go tool simdgen -out kernels_amd64.s -stubs kernels_amd64.go -pkg simd
//
// It is a tool of the module (go.mod's tool directive), so avo is pinned
// at the version go.mod requires; `make generate` runs it in vecindex/internal/simd (see
// vecindex/internal/simd/generate.go). Never edit its output by hand.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// panelWidths are the panel sizes, in blocks of 8 vectors, of the layout
// L2Nearest reads: as many 8-block panels as fit, then at most one of 4, 2
// and 1 blocks for the rest.
var panelWidths = []int{8, 4, 2, 1}

func main() {
	ConstraintExpr("amd64")
	l2Nearest()
	l2Bounded()
	Generate()
}

// l2Nearest emits L2Nearest. For each panel it zeroes one accumulator per
// block, and for each dimension d broadcasts x[d], subtracts the 8 values
// of dimension d of each block and adds the squared differences with a
// fused multiply-add: every distance is the sum, in dimension order, of its
// squared differences, whatever the panel's width. Each block's 8
// distances then update, lane by lane, the smallest distance seen, its
// vector's index and the second smallest.
func l2Nearest() {
	TEXT("L2Nearest", NOSPLIT, "func(x, panels []float32, blocks int, best *[8]int32, first, second *[8]float32)")
	Pragma("noescape")
	Doc(
		"L2Nearest finds the vectors of panels nearest to x in squared euclidean",
		"distance. panels holds blocks×8 vectors of len(x) values: the blocks are",
		"grouped into panels of 8 blocks while 8 or more remain, then one panel",
		"each of 4, 2 and 1 blocks as the rest allows, and a panel of g blocks",
		"holds, for each dimension d in turn, the 8g values of dimension d of its",
		"vectors, block by block. For each lane l, it sets first[l] to the",
		"smallest distance to the vectors 8b+l, best[l] to the lowest such b×8+l",
		"at that distance (0 when every distance is +Inf), and second[l] to the",
		"second smallest (+Inf for one block). panels must hold blocks×8×len(x)",
		"values. It needs AVX2 and FMA.",
	)
	xBase := Load(Param("x").Base(), GP64())
	dim := Load(Param("x").Len(), GP64())
	p := Load(Param("panels").Base(), GP64())
	blocks := Load(Param("blocks"), GP64())

	// Per-lane state: m1 (smallest), m2 (second smallest), i1 (index of
	// m1), cur (the indexes of the current block), eight (to step cur).
	m1, m2, i1, cur, eight := YMM(), YMM(), YMM(), YMM(), YMM()
	g := GP32()
	MOVL(U32(0x7f800000), g) // +Inf
	VMOVD(g, m1.AsX())
	VPBROADCASTD(m1.AsX(), m1)
	VMOVAPS(m1, m2)
	VPXOR(i1, i1, i1)
	MOVL(U32(8), g)
	VMOVD(g, eight.AsX())
	VPBROADCASTD(eight.AsX(), eight)
	lanes := GLOBL("laneindex", RODATA|NOPTR)
	for l := range 8 {
		DATA(4*l, U32(l))
	}
	VMOVDQU(lanes, cur)

	for i, w := range panelWidths {
		next := "done"
		if i+1 < len(panelWidths) {
			next = fmt.Sprintf("panel%d", panelWidths[i+1])
		}
		Label(fmt.Sprintf("panel%d", w))
		CMPQ(blocks, U32(w))
		JL(LabelRef(next))

		acc := make([]VecVirtual, w)
		for b := range acc {
			acc[b] = YMM()
			VXORPS(acc[b], acc[b], acc[b])
		}
		t := YMM()
		xq, n := GP64(), GP64()
		MOVQ(xBase, xq)
		MOVQ(dim, n)
		TESTQ(n, n)
		JZ(LabelRef(fmt.Sprintf("track%d", w)))

		Label(fmt.Sprintf("dims%d", w))
		xd := YMM()
		VBROADCASTSS(Mem{Base: xq}, xd)
		for b := range acc {
			VSUBPS(Mem{Base: p, Disp: 32 * b}, xd, t)
			VFMADD231PS(t, t, acc[b])
		}
		ADDQ(U32(4), xq)
		ADDQ(U32(32*w), p)
		DECQ(n)
		JNZ(LabelRef(fmt.Sprintf("dims%d", w)))

		Label(fmt.Sprintf("track%d", w))
		u := YMM()
		for _, d := range acc {
			// t = d < m1 (ordered, quiet); m2 = min(m2, max(m1, d));
			// m1 = min(m1, d); i1 = t ? cur : i1.
			VCMPPS(U8(0x11), m1, d, t)
			VMAXPS(d, m1, u)
			VMINPS(u, m2, m2)
			VMINPS(d, m1, m1)
			VBLENDVPS(t, cur, i1, i1)
			VPADDD(eight, cur, cur)
		}
		SUBQ(U32(w), blocks)
		if w == panelWidths[0] {
			JMP(LabelRef(fmt.Sprintf("panel%d", w)))
		}
	}
	Label("done")
	out := func(name string, v VecVirtual) {
		VMOVUPS(v, Mem{Base: Load(Param(name), GP64())})
	}
	out("best", i1)
	out("first", m1)
	out("second", m2)
	VZEROUPPER()
	RET()
}

// l2Bounded emits L2Bounded, the squared euclidean distance of two vectors
// with SSE, which every amd64 CPU has. It computes exactly what vecindex's
// Go version does, operation for operation: lane k of one register sums,
// in order, the squared differences of the dimensions k, k+4, k+8, ... of
// the whole groups of 4 (a multiply, then an add: no fused multiply-add,
// which rounds once where Go rounds twice), lane 0 then the rest one by
// one, and the result is (s0+s1)+(s2+s3). After each 16 dimensions that
// sum is compared with limit, and returned when it exceeds it.
func l2Bounded() {
	TEXT("L2Bounded", NOSPLIT, "func(a, b []float32, limit float32) float32")
	Pragma("noescape")
	Doc(
		"L2Bounded returns the squared euclidean distance of a and b over len(a)",
		"values, or, as soon as the distance is known to exceed limit, a partial",
		"sum greater than limit, checked after every 16 values. Lane k of the",
		"sum adds the squares of the differences of values k, k+4, k+8, ... of",
		"the whole groups of 4, lane 0 then those of the last len(a)%4 values,",
		"and the result is (s0+s1)+(s2+s3), each square rounded before it is",
		"added. b must hold at least len(a) values. It needs SSE only.",
	)
	ap := Load(Param("a").Base(), GP64())
	n := Load(Param("a").Len(), GP64())
	bp := Load(Param("b").Base(), GP64())
	limit := Load(Param("limit"), XMM())
	s, d, h, u := XMM(), XMM(), XMM(), XMM()
	XORPS(s, s)

	// hsum sets h to (s0+s1)+(s2+s3).
	hsum := func() {
		MOVAPS(s, h)
		SHUFPS(U8(0xb1), h, h) // s1 s0 s3 s2
		ADDPS(s, h)            // s0+s1 s1+s0 s2+s3 s3+s2
		MOVHLPS(h, u)          // s2+s3 in lane 0
		ADDSS(u, h)
	}
	group := func(disp int) {
		MOVUPS(Mem{Base: ap, Disp: disp}, d)
		MOVUPS(Mem{Base: bp, Disp: disp}, u)
		SUBPS(u, d)
		MULPS(d, d)
		ADDPS(d, s)
	}

	Label("sixteen")
	CMPQ(n, U32(16))
	JL(LabelRef("four"))
	for j := range 4 {
		group(16 * j)
	}
	ADDQ(U32(64), ap)
	ADDQ(U32(64), bp)
	SUBQ(U32(16), n)
	hsum()
	UCOMISS(limit, h)
	JA(LabelRef("ret"))
	JMP(LabelRef("sixteen"))

	Label("four")
	CMPQ(n, U32(4))
	JL(LabelRef("one"))
	group(0)
	ADDQ(U32(16), ap)
	ADDQ(U32(16), bp)
	SUBQ(U32(4), n)
	JMP(LabelRef("four"))

	Label("one")
	TESTQ(n, n)
	JZ(LabelRef("sum"))
	MOVSS(Mem{Base: ap}, d)
	SUBSS(Mem{Base: bp}, d)
	MULSS(d, d)
	ADDSS(d, s)
	ADDQ(U32(4), ap)
	ADDQ(U32(4), bp)
	DECQ(n)
	JMP(LabelRef("one"))

	Label("sum")
	hsum()
	Label("ret")
	Store(h, ReturnIndex(0))
	RET()
}
