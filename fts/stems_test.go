package fts

import (
	"fmt"
	"sync"
	"testing"

	"github.com/kljensen/snowball"
)

// TestStemCacheConcurrent: analysers on several goroutines, looking up
// words the cache has, has not yet, or holds in its unmerged part, all get
// the stemmer's answer.
func TestStemCacheConcurrent(t *testing.T) {
	words := make([]string, 3000)
	for i := range words {
		words[i] = fmt.Sprintf("running%dly", i%700) + []string{"", "s", "ing", "ed"}[i%4]
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for round := range 3 {
				for i := range words {
					w := words[(i*(g+1)+round)%len(words)]
					want, _ := snowball.Stem(w, "english", true)
					if got := stemCached(w, "english"); got != want {
						select {
						case errs <- fmt.Sprintf("%s: %q, want %q", w, got, want):
						default:
						}
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	// Words looked up often enough end in the map readers take without
	// a lock.
	if read := stems.read.Load(); read == nil || len(*read) == 0 {
		t.Fatalf("no stem was merged into the read map")
	}
}
