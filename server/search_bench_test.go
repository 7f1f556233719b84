package server_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/internal/testkit/apitest"
)

// BenchmarkTextSearch times full-text queries over 100k ten-word documents
// drawn from a 30-word vocabulary, so that each term matches about a third
// of the rows (the shape of make bench's full-text workload).
func BenchmarkTextSearch(b *testing.B) {
	s := apitest.Start(b, apitest.Options{})
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "text", Type: arrow.BinaryTypes.String}}, nil)
	vocab := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar " +
		"papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu lance vector search table")
	r := rand.New(rand.NewPCG(1, 2))
	var batches []arrow.RecordBatch
	for start := 0; start < 100_000; start += 10_000 {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := start; i < start+10_000; i++ {
			rb.Field(0).(*array.Int64Builder).Append(int64(i))
			words := make([]string, 10)
			for j := range words {
				words[j] = vocab[r.IntN(len(vocab))]
			}
			rb.Field(1).(*array.StringBuilder).Append(strings.Join(words, " "))
		}
		batches = append(batches, rb.NewRecordBatch())
	}
	if _, err := s.Client.CreateTable(b.Context(), []string{"docs"}, schema, batches, nil); err != nil {
		b.Fatal(err)
	}
	createIndex(b, s, "docs", `{"column":"text","index_type":"INVERTED"}`)
	for _, q := range []string{"alpha", "bravo delta"} {
		body := []byte(fmt.Sprintf(`{"vector":null,"k":10,"full_text_query":{"string_query":{"query":%q}}}`, q))
		b.Run(strings.ReplaceAll(q, " ", "_"), func(b *testing.B) {
			for b.Loop() {
				if status, out, _ := s.Do(b, "POST", "/v1/table/docs/query", jsonHeader, body); status != 200 {
					b.Fatalf("%d %s", status, out)
				}
			}
		})
	}
}
