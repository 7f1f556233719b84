package expr

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// maxCachedRegexps bounds the cache of compiled patterns; it is emptied
// when full.
const maxCachedRegexps = 256

var regexps struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}

// compileRegexp compiles an RE2 pattern with DataFusion-style flags: i
// (case-insensitive), m (multi-line), s (. matches newline), U (ungreedy)
// and c (case-sensitive, the default). It returns an error for a bad
// pattern or flag.
func compileRegexp(pattern, flags string) (*regexp.Regexp, error) {
	set := map[rune]bool{}
	for _, f := range flags {
		switch f {
		case 'i', 'm', 's', 'U':
			set[f] = true
		case 'c':
			delete(set, 'i')
		default:
			return nil, fmt.Errorf("unsupported regular expression flag %q", f)
		}
	}
	var prefix strings.Builder
	for _, f := range "imsU" {
		if set[f] {
			prefix.WriteRune(f)
		}
	}
	src := pattern
	if prefix.Len() > 0 {
		src = "(?" + prefix.String() + ")" + pattern
	}
	regexps.Lock()
	defer regexps.Unlock()
	if re, ok := regexps.m[src]; ok {
		return re, nil
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression: %v", err)
	}
	if len(regexps.m) >= maxCachedRegexps || regexps.m == nil {
		regexps.m = map[string]*regexp.Regexp{}
	}
	regexps.m[src] = re
	return re, nil
}
