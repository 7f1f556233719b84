// Package fts is the full-text search engine of lancens, the text twin of
// vecindex: the analyzer of Lance's tokenizer options (Analyzer), an
// in-memory inverted index with term frequencies and positions (Index),
// BM25 scoring and the evaluation of full-text queries — match, phrase,
// boost, multi-match, boolean — over the rows of one table version
// (Search).
//
// It holds no storage: the engine analyses each row's text, feeds the
// terms to an Index (Index.CatchUp), keeps the index in files beside the
// data (Index.MarshalBinary, LoadIndex), and tells a Search which rows a
// version holds and which pass a filter (RowSet).
package fts
