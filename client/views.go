package client

import (
	"bytes"
	"context"
	"encoding/base64"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancens/lancens/gen/apiclient"
)

// ViewKind says how a materialized view is computed.
type ViewKind string

// View kinds.
const (
	// ViewQuery is defined by its source query alone: one output row per
	// input row.
	ViewQuery ViewKind = "query"
	// ViewUDTF runs a batch table function and is refreshed in full.
	ViewUDTF ViewKind = "udtf"
	// ViewChunker expands each input row into several and is refreshed
	// incrementally.
	ViewChunker ViewKind = "chunker"
)

// MaterializedView defines a materialized view for CreateMaterializedView.
type MaterializedView struct {
	Kind ViewKind
	// SourceQuery feeds the view, in an encoding of the caller's choice;
	// the server keeps it verbatim.
	SourceQuery string
	// OutputSchema is the schema of the view's rows.
	OutputSchema *arrow.Schema
	// UDTF is the table function of ViewUDTF and ViewChunker views.
	UDTF *UDTFSpec
	// WithData starts a first refresh at once (the default is an empty
	// view).
	WithData bool
	// AutoRefresh asks the server to refresh the view as its source
	// changes (nil: the server's default).
	AutoRefresh *bool
}

// UDTFSpec is the table function behind a materialized view.
type UDTFSpec struct {
	Kind ViewKind
	// Envelope is the base64-encoded JSON envelope of the function, and
	// SHA256 its hex digest, which the server checks.
	Envelope, SHA256 string
	Name, Version    string
	InputColumns     []string
	// PartitionBy and PartitionByIndexedColumn group the input rows.
	PartitionBy, PartitionByIndexedColumn string
	// NumCPUs, NumGPUs and MemoryBytes are the resources of each worker.
	NumCPUs, NumGPUs float32
	MemoryBytes      int
	// Batch passes whole batches to the function rather than rows.
	Batch *bool
	// ErrorHandling is the server's error policy for the function.
	ErrorHandling map[string]any
	// Manifest describes the function's runtime environment, as JSON.
	Manifest, ManifestChecksum string
}

// CreatedView is what CreateMaterializedView reports.
type CreatedView struct {
	Version int64
	// JobID follows the first refresh, when WithData asked for one.
	JobID string
}

// CreateMaterializedView creates the materialized view id. Returns
// ErrTableAlreadyExists if the name is taken, ErrTableNotFound for a
// missing source; lancens answers ErrUnsupported for the kinds it does not
// compute (udtf, chunker).
func (c *Client) CreateMaterializedView(ctx context.Context, id []string, v MaterializedView) (*CreatedView, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	if v.OutputSchema == nil {
		return nil, invalid("a materialized view needs its output schema")
	}
	var schema bytes.Buffer
	w := ipc.NewWriter(&schema, ipc.WithSchema(v.OutputSchema))
	if err := w.Close(); err != nil {
		return nil, err
	}
	req := apiclient.CreateMaterializedViewRequest{
		Id: &id, Kind: apiclient.CreateMaterializedViewRequestKind(v.Kind), SourceQuery: v.SourceQuery,
		OutputSchema: base64.StdEncoding.EncodeToString(schema.Bytes()), WithNoData: Ptr(!v.WithData), AutoRefresh: v.AutoRefresh,
	}
	if u := v.UDTF; u != nil {
		spec := apiclient.MaterializedViewUdtfEntry{
			Kind: apiclient.MaterializedViewUdtfEntryKind(u.Kind), Udtf: u.Envelope, UdtfSha: u.SHA256, UdtfName: u.Name, UdtfVersion: u.Version,
			PartitionBy: optional(u.PartitionBy), PartitionByIndexedColumn: optional(u.PartitionByIndexedColumn), Memory: positive(u.MemoryBytes),
			Batch: u.Batch, Manifest: optional(u.Manifest), ManifestChecksum: optional(u.ManifestChecksum),
		}
		if u.InputColumns != nil {
			spec.InputColumns = &u.InputColumns
		}
		if u.NumCPUs > 0 {
			spec.NumCpus = &u.NumCPUs
		}
		if u.NumGPUs > 0 {
			spec.NumGpus = &u.NumGPUs
		}
		if u.ErrorHandling != nil {
			spec.ErrorHandling = &u.ErrorHandling
		}
		req.UdtfSpec = &spec
	}
	resp, err := c.api.CreateMaterializedViewWithResponse(ctx, path, &apiclient.CreateMaterializedViewParams{Delimiter: &c.delimiter}, req)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	if resp.JSON201 == nil {
		return nil, errMissing("view")
	}
	return &CreatedView{Version: resp.JSON201.Version, JobID: deref(resp.JSON201.JobId)}, nil
}

// RefreshOptions override settings of one refresh of a materialized view;
// zero fields keep the view's own.
type RefreshOptions struct {
	// SourceVersion is the version of the source table to refresh from.
	SourceVersion int
	Cluster       string
	// Concurrency and IntraApplierConcurrency set the parallelism.
	Concurrency, IntraApplierConcurrency int
	// Manifest replaces the stored runtime environment for this run.
	Manifest           string
	MaxRowsPerFragment int
	// OutputLimit caps the rows of a chunker view.
	OutputLimit    int
	SourceTaskSize int
}

// RefreshMaterializedView starts a refresh of the materialized view id and
// returns the id of its job. opts may be nil. Returns ErrTableNotFound if
// there is no such view, ErrInvalidInput for a table that is not one.
func (c *Client) RefreshMaterializedView(ctx context.Context, id []string, opts *RefreshOptions) (string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return "", err
	}
	req := apiclient.RefreshMaterializedViewRequest{Id: &id}
	if o := opts; o != nil {
		req.SrcVersion, req.Cluster, req.Manifest = positive(o.SourceVersion), optional(o.Cluster), optional(o.Manifest)
		req.Concurrency, req.IntraApplierConcurrency = positive(o.Concurrency), positive(o.IntraApplierConcurrency)
		req.MaxRowsPerFragment, req.OutputLimit, req.SourceTaskSize = positive(o.MaxRowsPerFragment), positive(o.OutputLimit), positive(o.SourceTaskSize)
	}
	resp, err := c.api.RefreshMaterializedViewWithResponse(ctx, path, &apiclient.RefreshMaterializedViewParams{Delimiter: &c.delimiter}, req)
	if err != nil {
		return "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	if resp.JSON202 == nil {
		return "", errMissing("job id")
	}
	return resp.JSON202.JobId, nil
}
