package client

import "github.com/lancens/lancens/gen/apiclient"

// FTSQuery is a structured full-text query for Query.FullTextQuery:
// MatchQuery, PhraseQuery, MultiMatchQuery, BoostQuery or BooleanQuery.
type FTSQuery interface {
	fts() apiclient.FtsQuery
}

// MatchQuery matches rows containing the words of Terms.
type MatchQuery struct {
	Terms string
	// Column to search; empty searches every column with a full-text index.
	Column string
	// Boost scales the score of this query.
	Boost float32
	// Fuzziness is how many edits a word may be away from a term.
	Fuzziness int
	// MaxExpansions caps how many words a fuzzy term expands to.
	MaxExpansions int
	// Operator is "Or" (the default: any term) or "And" (every term).
	Operator string
	// PrefixLength is how many leading characters fuzzy matches keep.
	PrefixLength int
}

// PhraseQuery matches rows containing the words of Terms in order, at most
// Slop words apart. The column's index needs positions (FTS.WithPosition).
type PhraseQuery struct {
	Terms  string
	Column string
	Slop   int
}

// MultiMatchQuery matches any of its queries; each names its own column.
type MultiMatchQuery struct {
	Queries []MatchQuery
}

// BoostQuery ranks the rows Positive matches, lowering those Negative
// matches too by NegativeBoost (0: the server's default, 0.5 for lancens).
type BoostQuery struct {
	Positive, Negative FTSQuery
	NegativeBoost      float32
}

// BooleanQuery combines queries: rows must match every Must query, must
// match none of MustNot, and score higher for each Should they match.
type BooleanQuery struct {
	Must, Should, MustNot []FTSQuery
}

func (m MatchQuery) match() apiclient.MatchQuery {
	out := apiclient.MatchQuery{Terms: m.Terms, Column: optional(m.Column), Operator: optional(m.Operator), MaxExpansions: positive(m.MaxExpansions)}
	if m.Boost != 0 {
		out.Boost = &m.Boost
	}
	if m.Fuzziness > 0 {
		out.Fuzziness = Ptr(int32(m.Fuzziness))
	}
	if m.PrefixLength > 0 {
		out.PrefixLength = Ptr(int32(m.PrefixLength))
	}
	return out
}

func (m MatchQuery) fts() apiclient.FtsQuery {
	mq := m.match()
	return apiclient.FtsQuery{Match: &mq}
}

func (p PhraseQuery) fts() apiclient.FtsQuery {
	out := apiclient.PhraseQuery{Terms: p.Terms, Column: optional(p.Column)}
	if p.Slop > 0 {
		out.Slop = Ptr(int32(p.Slop))
	}
	return apiclient.FtsQuery{Phrase: &out}
}

func (m MultiMatchQuery) fts() apiclient.FtsQuery {
	out := apiclient.MultiMatchQuery{MatchQueries: make([]apiclient.MatchQuery, len(m.Queries))}
	for i, q := range m.Queries {
		out.MatchQueries[i] = q.match()
	}
	return apiclient.FtsQuery{MultiMatch: &out}
}

func (b BoostQuery) fts() apiclient.FtsQuery {
	out := apiclient.BoostQuery{Positive: ftsOf(b.Positive), Negative: ftsOf(b.Negative)}
	if b.NegativeBoost != 0 {
		out.NegativeBoost = &b.NegativeBoost
	}
	return apiclient.FtsQuery{Boost: &out}
}

func (b BooleanQuery) fts() apiclient.FtsQuery {
	all := func(qs []FTSQuery) []apiclient.FtsQuery {
		out := make([]apiclient.FtsQuery, len(qs))
		for i, q := range qs {
			out[i] = ftsOf(q)
		}
		return out
	}
	return apiclient.FtsQuery{Boolean: &apiclient.BooleanQuery{Must: all(b.Must), Should: all(b.Should), MustNot: all(b.MustNot)}}
}

// ftsOf returns the wire form of q; a nil query is an empty node, which
// the server refuses with InvalidInput (13).
func ftsOf(q FTSQuery) apiclient.FtsQuery {
	if q == nil {
		return apiclient.FtsQuery{}
	}
	return q.fts()
}
