// Package closest suggests, for a name a user mistyped, the known name it
// most likely meant: the one at the smallest edit distance (Levenshtein,
// case-insensitive), when that distance is small for the name's length.
package closest

import "strings"

// Name returns the candidate closest to word and true, or "" and false
// when none is close enough to be a likely typo: at most a third of the
// longer name's characters may differ (at least one), so "filters" finds
// "filter" and "aws_endpont" finds "aws_endpoint", while "zzz" finds
// nothing. Among candidates at the same distance the first wins.
func Name(word string, candidates []string) (string, bool) {
	best, bestDist := "", -1
	w := []rune(strings.ToLower(word))
	for _, c := range candidates {
		d := distance(w, []rune(strings.ToLower(c)))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 || bestDist > max(1, max(len(w), len([]rune(best)))/3) {
		return "", false
	}
	return best, true
}

// Hint returns ` (did you mean "x"?)` for the candidate closest to word,
// or "" when none is close: the tail of an error message.
func Hint(word string, candidates []string) string {
	if c, ok := Name(word, candidates); ok {
		return ` (did you mean "` + c + `"?)`
	}
	return ""
}

// distance is the Levenshtein distance between a and b.
func distance(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
