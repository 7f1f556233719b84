package vecindex

import (
	"runtime"
	"testing"
)

// TestMemoryBytes checks the reported size of each kind of loaded index
// against the heap it really takes: loading it (all of its arrays are
// copies) and running one search (the pooled scratch) should grow the live
// heap by about MemoryBytes.
func TestMemoryBytes(t *testing.T) {
	q := make([]float32, 16)
	for name, built := range smallIndexes(t, 1, 6000) {
		func() {
			data := marshal(t, built)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&before)
			ix, err := Load(data)
			if err != nil {
				t.Fatal(err)
			}
			if ix.Params().Metric == Hamming {
				ix.SearchBytes(make([]byte, ix.Dim()), SearchOptions{K: 5})
			} else {
				ix.Search(q, SearchOptions{K: 5})
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			got := ix.MemoryBytes()
			runtime.KeepAlive(ix)
			runtime.KeepAlive(data)
			t.Logf("%s: MemoryBytes %d, heap grew %d", name, got, grew)
			if float64(got) < 0.9*float64(grew) || float64(got) > 1.1*float64(grew) {
				t.Errorf("%s: MemoryBytes = %d, but the index took %d bytes of heap", name, got, grew)
			}
		}()
	}
}
