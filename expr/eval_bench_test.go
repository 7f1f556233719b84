package expr

import (
	"fmt"
	"math/rand"
	"testing"
)

// BenchmarkEvalFilter evaluates filters over a million rows of an integer
// category (int32 values), a float price with 5% NULLs and a string name.
func BenchmarkEvalFilter(b *testing.B) {
	const n = 1_000_000
	r := rand.New(rand.NewSource(1))
	category, price, name := make([]int64, n), make([]float64, n), make([]string, n)
	valid := make([]bool, n)
	for i := range n {
		category[i] = int64(r.Int31n(20))
		price[i] = r.Float64() * 1000
		valid[i] = r.Intn(20) != 0
		name[i] = fmt.Sprintf("item-%d", r.Intn(10000))
	}
	cols := memColumns{n: n, vals: map[string]*Values{
		"category": {Type: intType, Ints: category},
		"price":    {Type: floatType, Floats: price, Valid: valid},
		"name":     {Type: stringType, Strings: name},
	}, res: testResolver{"category": {"c", intType}, "price": {"c", floatType}, "name": {"c", stringType}}}
	for _, src := range []string{
		"category = 7 AND price > 500",
		"category IN (1, 3, 5, 7, 9, 11, 13, 15, 17)",
		"price BETWEEN 100 AND 200 OR price IS NULL",
		"name = 'item-42'",
		"name LIKE 'item-42%'",
		"category * 2 + 1 > price / 100",
	} {
		e, err := Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(src, func(b *testing.B) {
			for b.Loop() {
				if _, ok, err := EvalFilter(e, cols); !ok || err != nil {
					b.Fatalf("ok=%v, %v", ok, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
		})
	}
}
