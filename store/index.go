package store

import (
	"context"
	"strings"
	"time"
)

// Index types, as the API names them.
const (
	IndexIVFFlat   = "IVF_FLAT"
	IndexIVFPQ     = "IVF_PQ"
	IndexIVFSQ     = "IVF_SQ"
	IndexIVFHNSWSQ = "IVF_HNSW_SQ"
	IndexIVFHNSWPQ = "IVF_HNSW_PQ"
	IndexBTree     = "BTREE"
	IndexBitmap    = "BITMAP"
	IndexLabelList = "LABEL_LIST"
	IndexInverted  = "INVERTED"
)

// lanceIndexTypes are the other index types Lance has, which lancens
// refuses by name.
var lanceIndexTypes = []string{"NGRAM", "ZONEMAP", "BLOOMFILTER", "RTREE", "IVF_RQ", "IVF_HNSW_FLAT"}

// NormalizeIndexType returns the canonical name of an index type ("FTS" is
// INVERTED, "VECTOR" is IVF_PQ, "SCALAR" is BTREE), case-insensitively. It
// returns Unsupported (0) for a Lance index type lancens does not build and
// InvalidInput (13) for an unknown one.
func NormalizeIndexType(s string) (string, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	switch t {
	case "FTS":
		return IndexInverted, nil
	case "VECTOR":
		return IndexIVFPQ, nil
	case "SCALAR":
		return IndexBTree, nil
	case IndexIVFFlat, IndexIVFPQ, IndexIVFSQ, IndexIVFHNSWSQ, IndexIVFHNSWPQ, IndexBTree, IndexBitmap, IndexLabelList, IndexInverted:
		return t, nil
	}
	for _, u := range lanceIndexTypes {
		if t == u {
			return "", Errorf(CodeUnsupported, "index type %s is not supported by lancens", t)
		}
	}
	return "", Errorf(CodeInvalidInput, "unknown index type %q", s)
}

// IsVectorIndex reports whether an index type indexes vectors.
func IsVectorIndex(t string) bool { return strings.HasPrefix(t, "IVF_") }

// VectorIndexParams tune a vector index build; zero means the default.
type VectorIndexParams struct {
	NumPartitions, TargetPartitionSize, NumSubVectors, NumBits, SampleRate, MaxIterations, M, EfConstruction int
}

// TextIndexParams configure a full-text index; nil fields take defaults.
type TextIndexParams struct {
	WithPosition    *bool
	BaseTokenizer   string
	Language        string
	LowerCase       *bool
	Stem            *bool
	RemoveStopWords *bool
	ASCIIFolding    *bool
	MaxTokenLength  *int
}

// IndexSpec asks for an index.
type IndexSpec struct {
	// Name defaults to "<column>_idx".
	Name   string
	Column string
	// Type is a canonical index type (see NormalizeIndexType).
	Type   string
	Metric string // vector indexes: l2, cosine, dot, hamming ("" = l2)
	Vector VectorIndexParams
	Text   TextIndexParams
	// Replace replaces an index of the same name instead of failing with
	// TableIndexAlreadyExists.
	Replace bool
}

// Index states.
const (
	IndexBuilding  = "BUILDING"
	IndexSucceeded = "SUCCEEDED"
	IndexFailed    = "FAILED"
)

// IndexInfo describes an index of a managed table at a version.
type IndexInfo struct {
	Name    string
	UUID    string
	Columns []string
	Type    string
	Status  string
	Metric  string
	// NumIndexedRows counts the rows of the version the index covers;
	// NumUnindexedRows those written after the build, searched exactly.
	NumIndexedRows   int64
	NumUnindexedRows int64
	SizeBytes        int64
	CreatedAt        time.Time
	// Details is a JSON object of the index's parameters.
	Details string
}

// Indexes manages the indexes of managed tables.
type Indexes interface {
	// CreateIndex records the index and queues its build; it returns the
	// build's transaction id. An index of the same name whose build FAILED
	// is replaced (as in Lance, where a failed build leaves nothing).
	// Returns TableColumnNotFound (12), TableIndexAlreadyExists (7),
	// InvalidInput (13) for a column of the wrong type or bad parameters.
	CreateIndex(ctx context.Context, id []string, spec IndexSpec) (string, error)

	// BuildIndex builds an index a job describes: vector indexes train on
	// a snapshot without blocking writes. A build that fails records
	// nothing; the job's end does (see Jobs). Returns ctx's error when ctx
	// ends first, InvalidInput (13) when the parameters do not fit the
	// data.
	BuildIndex(ctx context.Context, job BuildIndex) error

	// ListIndices lists the indexes of table id at a version (nil: latest),
	// sorted by name. Returns TableNotFound (4).
	ListIndices(ctx context.Context, id []string, version *int64, page Page) ([]IndexInfo, string, error)

	// DescribeIndex returns one index. Returns TableIndexNotFound (6).
	DescribeIndex(ctx context.Context, id []string, name string, version *int64) (*IndexInfo, error)

	// DropIndex drops an index and returns the transaction id. Returns
	// TableIndexNotFound (6).
	DropIndex(ctx context.Context, id []string, name string) (string, error)

	// PrewarmIndex loads an index into memory, so that the first search
	// using it does not wait for the load: a vector index, or the posting
	// lists of a full-text index. Scalar indexes are read through the
	// database's own page cache and need no load. Returns TableNotFound
	// (4), TableIndexNotFound (6), InvalidTableState (19) for an external
	// table or an index whose build has not succeeded.
	PrewarmIndex(ctx context.Context, id []string, name string) error
}

// IndexDetails returns the index_details of an index of type indexType
// asked for with metric and params v and t, with Lance's names
// (snake_case, as in the index details Lance records and LanceDB's
// listIndices reports): metric_type, the IVF and quantizer parameters
// (compression: pq or sq, with num_sub_vectors and num_bits), or a
// full-text index's tokenizer settings. A failed build's reason (failure,
// "" for none) is under "error".
func IndexDetails(indexType, metric string, v VectorIndexParams, t TextIndexParams, failure string) map[string]any {
	d := map[string]any{}
	setInt := func(m map[string]any, key string, n int) {
		if n != 0 {
			m[key] = n
		}
	}
	setBool := func(key string, b *bool) {
		if b != nil {
			d[key] = *b
		}
	}
	switch {
	case IsVectorIndex(indexType):
		d["metric_type"] = strings.ToUpper(metric)
		setInt(d, "num_partitions", v.NumPartitions)
		setInt(d, "target_partition_size", v.TargetPartitionSize)
		setInt(d, "sample_rate", v.SampleRate)
		setInt(d, "max_iterations", v.MaxIterations)
		switch indexType {
		case IndexIVFPQ, IndexIVFHNSWPQ:
			c := map[string]any{"type": "pq"}
			setInt(c, "num_sub_vectors", v.NumSubVectors)
			setInt(c, "num_bits", v.NumBits)
			d["compression"] = c
		case IndexIVFSQ, IndexIVFHNSWSQ:
			c := map[string]any{"type": "sq"}
			setInt(c, "num_bits", v.NumBits)
			d["compression"] = c
		}
		if indexType == IndexIVFHNSWPQ || indexType == IndexIVFHNSWSQ {
			setInt(d, "m", v.M)
			setInt(d, "ef_construction", v.EfConstruction)
		}
	case indexType == IndexInverted:
		if t.BaseTokenizer != "" {
			d["base_tokenizer"] = t.BaseTokenizer
		}
		if t.Language != "" {
			d["language"] = t.Language
		}
		setBool("with_position", t.WithPosition)
		setBool("lower_case", t.LowerCase)
		setBool("stem", t.Stem)
		setBool("remove_stop_words", t.RemoveStopWords)
		setBool("ascii_folding", t.ASCIIFolding)
		if t.MaxTokenLength != nil {
			d["max_token_length"] = *t.MaxTokenLength
		}
	}
	if failure != "" {
		d["error"] = failure
	}
	return d
}
