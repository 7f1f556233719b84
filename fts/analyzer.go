package fts

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball"
	"golang.org/x/text/unicode/norm"

	"github.com/lancens/lancens/store"
)

// Analyzer turns text into the terms a full-text index holds and a query
// looks for, as configured by the index (Lance's tokenizer options);
// stemming is the Snowball stemmer of the index's language. Its JSON form
// is how a store keeps it (the field names are part of that form).
type Analyzer struct {
	Tokenizer      string `json:"base_tokenizer"` // simple, whitespace or raw
	Language       string `json:"language"`       // a Snowball language, lower case
	LowerCase      bool   `json:"lower_case"`
	Stem           bool   `json:"stem"`
	StopWords      bool   `json:"remove_stop_words"`
	ASCIIFolding   bool   `json:"ascii_folding"`
	MaxTokenLength int    `json:"max_token_length"`
	WithPosition   bool   `json:"with_position"`
}

// NewAnalyzer applies Lance's defaults to an index's text parameters.
// Returns InvalidInput (13) for a tokenizer or language lancens lacks.
func NewAnalyzer(p store.TextIndexParams) (Analyzer, error) {
	a := Analyzer{Tokenizer: "simple", Language: "english", LowerCase: true, Stem: true, StopWords: true, ASCIIFolding: true, MaxTokenLength: 40}
	if p.BaseTokenizer != "" {
		a.Tokenizer = strings.ToLower(p.BaseTokenizer)
	}
	switch a.Tokenizer {
	case "simple", "whitespace", "raw":
	default:
		return a, store.Errorf(store.CodeInvalidInput, "base_tokenizer %q is not supported (simple, whitespace or raw)", p.BaseTokenizer)
	}
	if p.Language != "" {
		a.Language = strings.ToLower(p.Language)
	}
	if !slices.Contains(StemLanguages, a.Language) {
		return a, store.Errorf(store.CodeInvalidInput, "language %q is not supported (one of %s)", p.Language, strings.Join(StemLanguages, ", "))
	}
	set := func(dst *bool, src *bool) {
		if src != nil {
			*dst = *src
		}
	}
	set(&a.LowerCase, p.LowerCase)
	set(&a.Stem, p.Stem)
	set(&a.StopWords, p.RemoveStopWords)
	set(&a.ASCIIFolding, p.ASCIIFolding)
	set(&a.WithPosition, p.WithPosition)
	if p.MaxTokenLength != nil {
		a.MaxTokenLength = *p.MaxTokenLength
	}
	return a, nil
}

// StemLanguages are the languages the Snowball stemmer knows: the
// languages an index may name.
var StemLanguages = []string{"english", "french", "hungarian", "norwegian", "russian", "spanish", "swedish"}

// Terms splits text into index terms.
func (a Analyzer) Terms(text string) []string {
	var words []string
	switch a.Tokenizer {
	case "raw":
		words = []string{text}
	case "whitespace":
		words = strings.Fields(text)
	default:
		words = strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	}
	out := words[:0]
	for _, w := range words {
		if a.ASCIIFolding {
			w = fold(w)
		}
		if a.LowerCase {
			w = strings.ToLower(w)
		}
		if w == "" || (a.MaxTokenLength > 0 && len(w) > a.MaxTokenLength) || (a.StopWords && a.Language == "english" && stopWords[strings.ToLower(w)]) {
			continue
		}
		if a.Stem {
			w = a.stem(w)
		}
		out = append(out, w)
	}
	return out
}

// stem returns the Snowball stem of w. The stemmer works on lower case;
// when the index keeps case, the letters of w that the stem keeps keep
// their case ("Running" stems to "Run").
func (a Analyzer) stem(w string) string {
	stemmed := stemCached(w, a.Language)
	if stemmed == "" {
		return w
	}
	if a.LowerCase {
		return stemmed
	}
	orig, out := []rune(w), []rune(stemmed)
	for i := range out {
		if i < len(orig) && unicode.ToLower(orig[i]) == out[i] {
			out[i] = orig[i]
		}
	}
	return string(out)
}

// stems caches Snowball stems by language and word: text repeats its
// words, and stemming is most of the cost of analysing it. Readers look
// words up in an immutable map without locking (analysers run on every
// core, and a shared lock's counter alone took most of their time);
// new stems go to a map of their own under a mutex, which is merged into
// a new immutable map once looking words up there has cost as many locks
// as it holds words (as sync.Map promotes its writes). The cache is
// emptied when it reaches stemCacheSize entries.
var stems struct {
	read   atomic.Pointer[map[[2]string]string]
	mu     sync.Mutex
	dirty  map[[2]string]string
	misses int
}

const stemCacheSize = 1 << 17

// stemCached returns the stem of w in language, or "" when the stemmer
// has none.
func stemCached(w, language string) string {
	key := [2]string{language, w}
	read := stems.read.Load()
	if read != nil {
		if s, ok := (*read)[key]; ok {
			return s
		}
	}
	stems.mu.Lock()
	defer stems.mu.Unlock()
	s, ok := stems.dirty[key]
	if !ok {
		var err error
		if s, err = snowball.Stem(w, language, true); err != nil {
			s = ""
		}
		if stems.dirty == nil {
			stems.dirty = map[[2]string]string{}
		}
		stems.dirty[key] = s
	}
	stems.misses++
	size := 0
	if read != nil {
		size = len(*read)
	}
	if stems.misses >= len(stems.dirty) {
		merged := make(map[[2]string]string, size+len(stems.dirty))
		if read != nil && size+len(stems.dirty) <= stemCacheSize {
			for k, v := range *read {
				merged[k] = v
			}
		}
		for k, v := range stems.dirty {
			merged[k] = v
		}
		stems.read.Store(&merged)
		stems.dirty, stems.misses = nil, 0
	}
	return s
}

// fold removes diacritics: é becomes e. ASCII text has none and comes
// back as it is, without the decomposition's copy.
func fold(s string) string {
	if isASCII(s) {
		return s
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isASCII reports whether s holds only ASCII characters.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// stopWords are common English words left out of the index (other
// languages keep theirs).
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been before being
		below between both but by can did do does doing down during each few for from further had has have having he her here
		hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
		once only or other our ours ourselves out over own same she should so some such than that the their theirs them
		themselves then there these they this those through to too under until up very was we were what when where which
		while who whom why will with you your yours yourself yourselves`) {
		m[w] = true
	}
	return m
}()
