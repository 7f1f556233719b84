package fts

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lancens/lancens/store"
)

// FuzzAnalyzer analyses text under every combination of full-text index
// options, as a query string is analysed and as the index stores a row:
// no term is empty, terms respect the lower-case and length options, the
// analysis is deterministic, and the terms read back from their stored
// form (what a store keeps) are the terms a query looks for. The
// length limit is checked on valid UTF-8 only (what JSON and validated
// string columns hold): the stemmer turns each invalid byte of a word
// into a 3-byte U+FFFD after the limit has been applied.
func FuzzAnalyzer(f *testing.F) {
	f.Add(uint16(0), uint8(40), "The quick brown foxes jumped")
	f.Fuzz(func(t *testing.T, opts uint16, maxLen uint8, text string) {
		bit := func(i int) *bool { v := opts>>i&1 != 0; return &v }
		n := int(maxLen)
		p := store.TextIndexParams{
			BaseTokenizer: []string{"simple", "whitespace", "raw", "Simple"}[opts&3],
			Language:      StemLanguages[int(opts>>2&7)%len(StemLanguages)],
			LowerCase:     bit(5), Stem: bit(6), RemoveStopWords: bit(7), ASCIIFolding: bit(8), WithPosition: bit(9),
			MaxTokenLength: &n,
		}
		a, err := NewAnalyzer(p)
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		terms := a.Terms(text)
		for _, term := range terms {
			switch {
			case term == "":
				t.Fatalf("%+v: an empty term in %q", a, terms)
			case a.LowerCase && term != strings.ToLower(term):
				t.Fatalf("%+v: term %q is not lower case", a, term)
			case a.MaxTokenLength > 0 && len(term) > a.MaxTokenLength && utf8.ValidString(text):
				t.Fatalf("%+v: term %q is longer than %d bytes", a, term, a.MaxTokenLength)
			}
		}
		if again := a.Terms(text); !slices.Equal(again, terms) {
			t.Fatalf("%+v: %q analysed to %q, then to %q", a, text, terms, again)
		}
	})
}
