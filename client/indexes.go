package client

import (
	"context"
	"iter"
	"strings"
	"time"

	"github.com/lancens/lancens/gen/apiclient"
)

// IndexConfig is the kind of index CreateIndex builds, with its settings:
// IVFFlat, IVFPQ, IVFSQ, IVFHNSWSQ, IVFHNSWPQ, BTree, Bitmap, LabelList or
// FTS. Zero settings let the server choose.
type IndexConfig interface {
	// IndexType returns the type of index the config builds.
	IndexType() IndexType
	apply(*apiclient.CreateTableIndexRequest)
}

// ScalarIndexConfig is an index on plain values (BTree, Bitmap or
// LabelList), which CreateScalarIndex builds too.
type ScalarIndexConfig interface {
	IndexConfig
	scalar()
}

// IVFFlat is an inverted-file vector index over exact vectors.
type IVFFlat struct {
	DistanceType DistanceType
	// NumPartitions or TargetPartitionSize (rows per partition) size the
	// inverted file.
	NumPartitions, TargetPartitionSize int
	// SampleRate and MaxIterations tune the k-means training.
	SampleRate, MaxIterations int
}

// IVFPQ is an inverted-file vector index over product-quantized vectors.
type IVFPQ struct {
	DistanceType                       DistanceType
	NumPartitions, TargetPartitionSize int
	// NumSubVectors and NumBits shape the product quantizer.
	NumSubVectors, NumBits    int
	SampleRate, MaxIterations int
}

// IVFSQ is an inverted-file vector index over scalar-quantized vectors.
type IVFSQ struct {
	DistanceType                       DistanceType
	NumPartitions, TargetPartitionSize int
	SampleRate, MaxIterations          int
}

// IVFHNSWSQ is an inverted-file index with an HNSW graph over
// scalar-quantized vectors in each partition.
type IVFHNSWSQ struct {
	DistanceType                       DistanceType
	NumPartitions, TargetPartitionSize int
	SampleRate, MaxIterations          int
	// M is the number of neighbours per graph node; EfConstruction the
	// candidate list size while building.
	M, EfConstruction int
}

// IVFHNSWPQ is an inverted-file index with an HNSW graph over
// product-quantized vectors in each partition.
type IVFHNSWPQ struct {
	DistanceType                       DistanceType
	NumPartitions, TargetPartitionSize int
	NumSubVectors, NumBits             int
	SampleRate, MaxIterations          int
	M, EfConstruction                  int
}

// BTree is a sorted index on scalar values, for range and equality filters.
type BTree struct{}

// Bitmap is an index for scalar columns with few distinct values.
type Bitmap struct{}

// LabelList is an index for list columns, for array_has_any and
// array_has_all filters.
type LabelList struct{}

// FTS is a full-text (inverted) index on a string column. Nil settings keep
// the server's defaults.
type FTS struct {
	// WithPosition records token positions, which phrase queries need.
	WithPosition *bool
	// BaseTokenizer splits text into tokens, for example "simple",
	// "whitespace" or "raw".
	BaseTokenizer string
	// Language drives stemming and stop words, for example "English".
	Language string
	// MaxTokenLength leaves out longer tokens.
	MaxTokenLength *int
	LowerCase      *bool
	Stem           *bool
	// RemoveStopWords leaves out common words of Language.
	RemoveStopWords *bool
	// ASCIIFolding folds accented letters to ASCII.
	ASCIIFolding *bool
}

// Ptr returns a pointer to v, for the optional settings of FTS and others.
func Ptr[T any](v T) *T { return &v }

func (IVFFlat) IndexType() IndexType   { return IndexIVFFlat }
func (IVFPQ) IndexType() IndexType     { return IndexIVFPQ }
func (IVFSQ) IndexType() IndexType     { return IndexIVFSQ }
func (IVFHNSWSQ) IndexType() IndexType { return IndexIVFHNSWSQ }
func (IVFHNSWPQ) IndexType() IndexType { return IndexIVFHNSWPQ }
func (BTree) IndexType() IndexType     { return IndexBTree }
func (Bitmap) IndexType() IndexType    { return IndexBitmap }
func (LabelList) IndexType() IndexType { return IndexLabelList }
func (FTS) IndexType() IndexType       { return IndexFTS }

func (BTree) scalar()     {}
func (Bitmap) scalar()    {}
func (LabelList) scalar() {}

// ivf sets the settings all IVF types share.
func ivf(r *apiclient.CreateTableIndexRequest, d DistanceType, partitions, partitionSize, sampleRate, iterations int) {
	r.DistanceType = optional(string(d))
	r.NumPartitions, r.TargetPartitionSize = positive(partitions), positive(partitionSize)
	r.SampleRate, r.MaxIterations = positive(sampleRate), positive(iterations)
}

func (x IVFFlat) apply(r *apiclient.CreateTableIndexRequest) {
	ivf(r, x.DistanceType, x.NumPartitions, x.TargetPartitionSize, x.SampleRate, x.MaxIterations)
}

func (x IVFPQ) apply(r *apiclient.CreateTableIndexRequest) {
	ivf(r, x.DistanceType, x.NumPartitions, x.TargetPartitionSize, x.SampleRate, x.MaxIterations)
	r.NumSubVectors, r.NumBits = positive(x.NumSubVectors), positive(x.NumBits)
}

func (x IVFSQ) apply(r *apiclient.CreateTableIndexRequest) {
	ivf(r, x.DistanceType, x.NumPartitions, x.TargetPartitionSize, x.SampleRate, x.MaxIterations)
}

func (x IVFHNSWSQ) apply(r *apiclient.CreateTableIndexRequest) {
	ivf(r, x.DistanceType, x.NumPartitions, x.TargetPartitionSize, x.SampleRate, x.MaxIterations)
	r.M, r.EfConstruction = positive(x.M), positive(x.EfConstruction)
}

func (x IVFHNSWPQ) apply(r *apiclient.CreateTableIndexRequest) {
	ivf(r, x.DistanceType, x.NumPartitions, x.TargetPartitionSize, x.SampleRate, x.MaxIterations)
	r.NumSubVectors, r.NumBits = positive(x.NumSubVectors), positive(x.NumBits)
	r.M, r.EfConstruction = positive(x.M), positive(x.EfConstruction)
}

func (BTree) apply(*apiclient.CreateTableIndexRequest)     {}
func (Bitmap) apply(*apiclient.CreateTableIndexRequest)    {}
func (LabelList) apply(*apiclient.CreateTableIndexRequest) {}

func (x FTS) apply(r *apiclient.CreateTableIndexRequest) {
	r.WithPosition, r.BaseTokenizer, r.Language = x.WithPosition, optional(x.BaseTokenizer), optional(x.Language)
	r.MaxTokenLength, r.LowerCase, r.Stem = x.MaxTokenLength, x.LowerCase, x.Stem
	r.RemoveStopWords, r.AsciiFolding = x.RemoveStopWords, x.ASCIIFolding
}

func positive(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

// IndexOptions are the optional parts of CreateIndex.
type IndexOptions struct {
	// Name of the index; empty lets the server name it (lancens:
	// "<column>_idx").
	Name string
}

func indexRequest(id []string, branch, column string, cfg IndexConfig, opts *IndexOptions) apiclient.CreateTableIndexRequest {
	req := apiclient.CreateTableIndexRequest{Id: &id, Column: column, IndexType: string(cfg.IndexType()), Branch: optional(branch)}
	cfg.apply(&req)
	if opts != nil {
		req.Name = optional(opts.Name)
	}
	return req
}

// CreateIndex starts building an index of table id on column and returns
// the transaction id that tracks the build (vector indexes build in the
// background; see Table.WaitForIndex). opts may be nil. Returns
// ErrTableIndexAlreadyExists if the name is taken, ErrTableColumnNotFound
// for an unknown column.
func (c *Client) CreateIndex(ctx context.Context, id []string, column string, cfg IndexConfig, opts *IndexOptions) (string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return "", err
	}
	resp, err := c.api.CreateTableIndexWithResponse(ctx, path, &apiclient.CreateTableIndexParams{Delimiter: &c.delimiter}, indexRequest(id, c.branch, column, cfg, opts))
	if err != nil {
		return "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	return deref(resp.JSON200.TransactionId), nil
}

// CreateScalarIndex builds a scalar index of table id on column, through
// the API's scalar-only route, and returns the transaction id. opts may be
// nil. Returns the errors of CreateIndex.
func (c *Client) CreateScalarIndex(ctx context.Context, id []string, column string, cfg ScalarIndexConfig, opts *IndexOptions) (string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return "", err
	}
	resp, err := c.api.CreateTableScalarIndexWithResponse(ctx, path, &apiclient.CreateTableScalarIndexParams{Delimiter: &c.delimiter}, indexRequest(id, c.branch, column, cfg, opts))
	if err != nil {
		return "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	return deref(resp.JSON200.TransactionId), nil
}

// Index describes one index of a table. Fields the server did not fill are
// zero.
type Index struct {
	Name    string
	UUID    string
	Columns []string
	Type    IndexType
	// Status is the build status, for lancens BUILDING, SUCCEEDED or
	// FAILED.
	Status           string
	NumIndexedRows   int64
	NumUnindexedRows int64
	SizeBytes        int64
	CreatedAt        time.Time
	// Details are the server's own description of the index's settings.
	Details string
}

// ListIndicesPage returns one page of the indexes of table id at a version
// (nil: the latest) and the token of the next page ("" at the end).
func (c *Client) ListIndicesPage(ctx context.Context, id []string, version *int64, pageToken string, limit int) ([]Index, string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, "", err
	}
	req := apiclient.ListTableIndicesRequest{Id: &id, Branch: c.branchParam(), Version: version, PageToken: optional(pageToken), Limit: positive(limit)}
	resp, err := c.api.ListTableIndicesWithResponse(ctx, path, &apiclient.ListTableIndicesParams{Delimiter: &c.delimiter}, req)
	if err != nil {
		return nil, "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, "", err
	}
	out := make([]Index, len(resp.JSON200.Indexes))
	for i, ix := range resp.JSON200.Indexes {
		out[i] = Index{
			Name: ix.IndexName, UUID: ix.IndexUuid, Columns: ix.Columns, Type: IndexType(deref(ix.IndexType)), Status: ix.Status,
			NumIndexedRows: deref(ix.NumIndexedRows), NumUnindexedRows: deref(ix.NumUnindexedRows), SizeBytes: deref(ix.SizeBytes),
			CreatedAt: deref(ix.CreatedAt), Details: deref(ix.IndexDetails),
		}
	}
	return out, deref(resp.JSON200.PageToken), nil
}

// ListIndices iterates over the indexes of table id at a version (nil: the
// latest), following page tokens.
func (c *Client) ListIndices(ctx context.Context, id []string, version *int64) iter.Seq2[Index, error] {
	return paginate(func(token string) ([]Index, string, error) {
		return c.ListIndicesPage(ctx, id, version, token, 0)
	})
}

// IndexStats are the statistics of one index. Fields the server did not
// fill are zero.
type IndexStats struct {
	Type             IndexType
	DistanceType     DistanceType
	NumIndexedRows   int64
	NumUnindexedRows int64
	// NumIndices is how many index segments make up the index.
	NumIndices int
}

// IndexStats returns the statistics of index name of table id at a version
// (nil: the latest). Returns ErrTableIndexNotFound if there is no such
// index.
func (c *Client) IndexStats(ctx context.Context, id []string, name string, version *int64) (*IndexStats, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.DescribeTableIndexStatsWithResponse(ctx, path, name, &apiclient.DescribeTableIndexStatsParams{Delimiter: &c.delimiter},
		apiclient.DescribeTableIndexStatsRequest{Id: &id, Branch: c.branchParam(), IndexName: &name, Version: version})
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	r := resp.JSON200
	return &IndexStats{Type: IndexType(deref(r.IndexType)), DistanceType: DistanceType(deref(r.DistanceType)),
		NumIndexedRows: deref(r.NumIndexedRows), NumUnindexedRows: deref(r.NumUnindexedRows), NumIndices: int(deref(r.NumIndices))}, nil
}

// DropIndex drops index name of table id and returns the transaction id.
// Returns ErrTableIndexNotFound if there is no such index.
func (c *Client) DropIndex(ctx context.Context, id []string, name string) (string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return "", err
	}
	resp, err := c.api.DropTableIndexWithResponse(ctx, path, name, &apiclient.DropTableIndexParams{Delimiter: &c.delimiter, Branch: c.branchParam()})
	if err != nil {
		return "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	return deref(resp.JSON200.TransactionId), nil
}

// indexBuilding reports whether an index status means the build goes on.
func indexBuilding(status string) bool {
	switch strings.ToUpper(status) {
	case "BUILDING", "PENDING", "QUEUED", "RUNNING", "INDEXING", "IN_PROGRESS":
		return true
	}
	return false
}
