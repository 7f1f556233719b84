package engine

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestTake checks take against gathering by concatenation, for every
// layout take copies itself, on sliced arrays with nulls.
func TestTake(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	cases := []struct {
		dt   arrow.DataType
		json string
	}{
		{arrow.PrimitiveTypes.Int64, `[1, null, 3, 4, 5, 6]`},
		{arrow.PrimitiveTypes.Float32, `[1.5, 2, null, 4, 5, 6]`},
		{arrow.FixedWidthTypes.Boolean, `[true, false, null, true, true, false]`},
		{arrow.BinaryTypes.String, `["a", "bb", null, "", "eeeee", "f"]`},
		{arrow.BinaryTypes.LargeBinary, `["YQ==", null, "Y2M=", "", "ZQ==", "Zg=="]`},
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, `[1, 2, null, 4, 5, 6]`},
		{arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), `[[1, 2], null, [3, 4], [5, null], [7, 8], [9, 10]]`},
		{arrow.ListOf(arrow.BinaryTypes.String), `[["a"], [], null, ["b", "c"], ["d"], ["e", null]]`},
		{arrow.LargeListOf(arrow.PrimitiveTypes.Int32), `[[1], [], null, [2, 3], [4], [5]]`},
		{arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int16, Nullable: true}, arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}),
			`[{"x": 1, "s": "a"}, null, {"x": null, "s": "c"}, {"x": 4, "s": null}, {"x": 5, "s": "e"}, {"x": 6, "s": "f"}]`},
		{&arrow.Decimal128Type{Precision: 10, Scale: 2}, `["1.00", "2.50", null, "4.00", "5.25", "6.00"]`},
		{arrow.Null, `[null, null, null, null, null, null]`},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.dt.String(), "/", "_"), func(t *testing.T) {
			full, _, err := array.FromJSON(mem, tc.dt, strings.NewReader(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			defer full.Release()
			sliced := array.NewSlice(full, 1, 6) // a non-zero offset
			defer sliced.Release()
			for _, idx := range [][]int{{}, {0}, {4, 0, 2, 2, 1}, {3, 3, 3}} {
				got := take(mem, sliced, idx)
				want := fromData(concatRows(mem, sliced, idx))
				if !array.Equal(got, want) {
					t.Errorf("take %v of %v: got %v, want %v", idx, sliced, got, want)
				}
				got.Release()
				want.Release()
			}
		})
	}
}
