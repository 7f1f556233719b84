package store

// TextSearch is the full-text part of a query: a query tree, or a plain
// string query over Columns (none: every column with a full-text index).
type TextSearch struct {
	Query   FtsQuery
	Columns []string
}

// FtsQuery is one full-text query: exactly one field is set.
type FtsQuery struct {
	Match      *FtsMatch
	Phrase     *FtsPhrase
	Boost      *FtsBoost
	MultiMatch *FtsMultiMatch
	Boolean    *FtsBoolean
}

// FtsMatch matches documents containing the terms: any of them (operator
// OR, the default) or all (AND), within edit distance Fuzziness (0: exact)
// of terms sharing their first PrefixLength characters. Column "" means
// every indexed column; Boost scales the score (0: 1).
type FtsMatch struct {
	Terms         string
	Column        string
	Boost         float32
	Fuzziness     int
	MaxExpansions int
	Operator      string
	PrefixLength  int
}

// FtsPhrase matches the terms in order, at most Slop positions apart.
type FtsPhrase struct {
	Terms  string
	Column string
	Slop   int
}

// FtsBoost scores documents by Positive, scaled down by NegativeBoost for
// those that also match Negative.
type FtsBoost struct {
	Positive      FtsQuery
	Negative      FtsQuery
	NegativeBoost float32
}

// FtsMultiMatch matches any of several match queries (typically one per
// column), adding their scores.
type FtsMultiMatch struct {
	Matches []FtsMatch
}

// FtsBoolean combines queries: every Must, none of MustNot, and Should
// adding to the score (required when there is no Must).
type FtsBoolean struct {
	Must, Should, MustNot []FtsQuery
}
