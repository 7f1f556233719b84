// Package vecindex implements exact and approximate nearest-neighbour search
// over dense vectors, with the IVF-family index types of Lance: IVF_FLAT,
// IVF_PQ, IVF_SQ, IVF_HNSW_SQ and IVF_HNSW_PQ, under the l2, cosine, dot and
// hamming distance types.
//
// Distances follow Lance's `_distance` column: l2 is the squared euclidean
// distance, cosine is 1 − cos_sim (in [0, 2]), dot is the negated dot
// product and hamming counts differing bits of uint8 vectors. Results are
// ordered by distance ascending, ties by id ascending.
//
// An IVF index clusters the vectors with k-means into partitions and, at
// query time, scans only the partitions whose centroids are nearest to the
// query. IVF_FLAT keeps the vectors as they are (its distances are exact);
// IVF_PQ and IVF_SQ store the residual of each vector from an anchor (its
// partition centroid, or with fewer than 256 partitions the nearest of 256
// finer centroids), product- or scalar-quantised, and score it with
// precomputed lookup tables or integer weights, adding each vector's
// quantisation error so that estimates are unbiased; the IVF_HNSW kinds
// additionally link each partition's vectors into an HNSW graph, built from
// the full-precision vectors and searched with the quantised distances.
// Approximate distances are meant to be re-ranked by the caller against the
// original vectors (refine_factor).
//
// Builds are deterministic for a given seed whatever the number of CPUs, and
// an Index serialises with MarshalBinary and Load. An Index is safe for
// concurrent searches.
package vecindex
