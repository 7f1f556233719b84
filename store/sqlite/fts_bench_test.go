package sqlite_test

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// BenchmarkTextIndexBuild times creating a full-text (INVERTED) index, with
// the default analyzer, over 50k rows of 10 random English words each.
func BenchmarkTextIndexBuild(b *testing.B) {
	const rows = 50_000
	words := strings.Fields(`the quick brown fox jumps over lazy dogs running searches vectors tables
		lances alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar
		papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu indexes building written`)
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	r := rand.New(rand.NewPCG(3, 4))
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for i := range rows {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		s := make([]string, 10)
		for j := range s {
			s[j] = words[r.IntN(len(words))]
		}
		rb.Field(1).(*array.StringBuilder).Append(strings.Join(s, " "))
	}
	rec := rb.NewRecordBatch()
	for b.Loop() {
		b.StopTimer()
		db, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "lancens.db"), sqlite.Options{Synchronous: "NORMAL"})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := db.CreateTable(b.Context(), []string{"t"}, store.NewTable{Data: store.NewData(schema, rec)}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := db.CreateIndex(b.Context(), []string{"t"}, store.IndexSpec{Column: "text", Type: store.IndexInverted}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
}
