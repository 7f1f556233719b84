package vecindex

// Stats returns a description of the index for index_details: its type,
// distance type, dimension, row counts, partition count and sizes, and the
// parameters of its quantizer and graphs.
func (ix *Index) Stats() map[string]any {
	p := ix.params
	parts := len(ix.offsets) - 1
	sizes := make([]int, parts)
	minSize, maxSize := len(ix.ids), 0
	for i := range sizes {
		sizes[i] = ix.offsets[i+1] - ix.offsets[i]
		minSize, maxSize = min(minSize, sizes[i]), max(maxSize, sizes[i])
	}
	st := map[string]any{
		"index_type":         p.Kind.String(),
		"distance_type":      p.Metric.String(),
		"dimension":          ix.dim,
		"num_indexed_rows":   ix.Len(),
		"num_deleted_rows":   len(ix.ids) - ix.Len(),
		"num_partitions":     parts,
		"partition_sizes":    sizes,
		"min_partition_size": minSize,
		"max_partition_size": maxSize,
		"sample_rate":        p.SampleRate,
		"max_iterations":     p.MaxIterations,
		"seed":               p.Seed,
	}
	if p.TargetPartitionSize > 0 {
		st["target_partition_size"] = p.TargetPartitionSize
	}
	if ix.anchors != nil {
		st["residual_anchors"] = len(ix.anchors) / ix.dim
	}
	switch {
	case ix.pq != nil:
		st["num_sub_vectors"] = ix.pq.m
		st["num_bits"] = ix.pq.bits
		st["sub_vector_dimension"] = ix.pq.subDim
	case ix.sq != nil:
		st["num_bits"] = p.NumBits
	}
	if ix.graphs != nil {
		levels, links := 0, 0
		for _, g := range ix.graphs {
			levels = max(levels, len(g.levels))
			for _, lv := range g.levels {
				links += len(lv.links)
			}
		}
		st["m"] = p.M
		st["ef_construction"] = p.EfConstruction
		st["max_levels"] = levels
		st["num_links"] = links
	}
	return st
}
