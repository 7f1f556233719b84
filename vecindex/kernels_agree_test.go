package vecindex

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestNearestKernelsAgree checks that the assembly kernel and its Go
// fallback find the same nearest vector, and the same two distances up to
// rounding, for random vectors and queries. It skips on CPUs without the
// kernel's instructions, where only the Go fallback runs.
func TestNearestKernelsAgree(t *testing.T) {
	if !nearestKernel {
		t.Skip("this CPU does not run the assembly kernel (AVX2 and FMA)")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, dim := range []int{1, 5, 16, 33, 128} {
		for _, k := range []int{1, 9, 64, 100, 257} {
			vecs := make([]float32, k*dim)
			for i := range vecs {
				vecs[i] = float32(rng.NormFloat64())
			}
			ps := newPanels(vecs, dim)
			for q := range 20 {
				x := make([]float32, dim)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				var asmBest, goBest [8]int32
				var asmFirst, asmSecond, goFirst, goSecond [8]float32
				if !l2NearestAsm(x, ps.data, ps.blocks(), &asmBest, &asmFirst, &asmSecond) {
					t.Fatal("the assembly kernel did not run")
				}
				l2NearestGo(x, ps.data, ps.blocks(), &goBest, &goFirst, &goSecond)
				ab, a1, a2 := reduceLanes(&asmBest, &asmFirst, &asmSecond)
				gb, g1, g2 := reduceLanes(&goBest, &goFirst, &goSecond)
				near := func(a, b float32) bool {
					return a == b || math.Abs(float64(a-b)) <= 1e-5*math.Max(math.Abs(float64(a)), math.Abs(float64(b)))
				}
				// Rounding may order two vectors at nearly the same
				// distance differently: then both answers are that close.
				if (ab != gb && !near(a1, a2)) || !near(a1, g1) || !near(a2, g2) {
					t.Errorf("dim %d, k %d, query %d: assembly %d, %v, %v; Go %d, %v, %v", dim, k, q, ab, a1, a2, gb, g1, g2)
				}
			}
		}
	}
}

// TestL2KernelsAgree checks that simd.L2Bounded returns what l2BoundedGo
// does, bit for bit, for every length up to 70 values (whole groups of 16
// and 4 and the rest) and limits that stop it early, late or never.
func TestL2KernelsAgree(t *testing.T) {
	if !l2Kernel {
		t.Skip("no assembly kernel for l2Bounded on this CPU")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for n := range 71 {
		for range 20 {
			a, b := make([]float32, n), make([]float32, n+3)
			for i := range a {
				a[i] = float32(rng.NormFloat64() * 2)
			}
			for i := range b {
				b[i] = float32(rng.NormFloat64() * 2)
			}
			full := l2BoundedGo(a, b, inf)
			for _, limit := range []float32{inf, full, full * 0.5, full * 0.9, 0, -1, float32(math.NaN())} {
				got, ok := l2BoundedAsm(a, b[:n], limit)
				want := l2BoundedGo(a, b, limit)
				if !ok || math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%d values, limit %v: assembly %v, Go %v", n, limit, got, want)
				}
			}
		}
	}
}

// TestBuildKernelsAgree builds an index of each kind with the assembly
// kernels and with the Go fallbacks (the run-time switches nearestKernel
// and l2Kernel), on clustered data, and checks that the two are the same,
// byte for byte.
func TestBuildKernelsAgree(t *testing.T) {
	haveNearest, haveL2 := nearestKernel, l2Kernel
	if !haveNearest && !haveL2 {
		t.Skip("this CPU runs no assembly kernel")
	}
	defer func() { nearestKernel, l2Kernel = haveNearest, haveL2 }()
	vs := clustered(41, 2000, 32, 24)
	for _, p := range []Params{
		{Kind: IVFFlat, NumPartitions: 16, Seed: 3},
		{Kind: IVFPQ, NumPartitions: 16, NumSubVectors: 8, Seed: 3},
		{Kind: IVFSQ, NumPartitions: 16, Seed: 3},
		{Kind: IVFHNSWSQ, NumPartitions: 2, Seed: 3},
		{Kind: IVFHNSWPQ, NumPartitions: 2, NumSubVectors: 8, Seed: 3},
	} {
		t.Run(fmt.Sprint(p.Kind), func(t *testing.T) {
			var built [2][]byte
			for i, useKernels := range []bool{true, false} {
				nearestKernel, l2Kernel = haveNearest && useKernels, haveL2 && useKernels
				ix, err := Build(context.Background(), p, vs)
				nearestKernel, l2Kernel = haveNearest, haveL2
				if err != nil {
					t.Fatal(err)
				}
				if built[i], err = ix.MarshalBinary(); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(built[0], built[1]) {
				t.Errorf("the index built with the assembly kernels differs from the one built in Go")
			}
		})
	}
}
