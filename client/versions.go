package client

import (
	"context"
	"iter"
	"time"

	"github.com/lancens/lancens/gen/apiclient"
)

// TableVersion is the record of one committed version of a table.
type TableVersion struct {
	Version      int64
	ManifestPath string
	ManifestSize *int64
	ETag         *string
	Timestamp    time.Time
	Metadata     map[string]string
}

func tableVersion(v *apiclient.TableVersion) TableVersion {
	out := TableVersion{Version: v.Version, ManifestPath: v.ManifestPath, ManifestSize: v.ManifestSize, ETag: v.ETag}
	if v.TimestampMillis != nil {
		out.Timestamp = time.UnixMilli(*v.TimestampMillis).UTC()
	}
	if v.Metadata != nil {
		out.Metadata = *v.Metadata
	}
	return out
}

// ListVersionsOptions select the versions ListTableVersionsPage returns.
type ListVersionsOptions struct {
	Branch     string // "" is main
	Descending bool
	PageToken  string
	Limit      int
}

// ListTableVersionsPage returns one page of the versions of table id and the
// token of the next page ("" at the end). opts may be nil.
func (c *Client) ListTableVersionsPage(ctx context.Context, id []string, opts *ListVersionsOptions) ([]TableVersion, string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, "", err
	}
	params := &apiclient.ListTableVersionsParams{Delimiter: &c.delimiter}
	if opts != nil {
		params.Branch, params.PageToken = optional(opts.Branch), optional(opts.PageToken)
		params.Descending, params.Limit = optionalTrue(opts.Descending), positive(opts.Limit)
	}
	resp, err := c.api.ListTableVersionsWithResponse(ctx, path, params)
	if err != nil {
		return nil, "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, "", err
	}
	out := make([]TableVersion, len(resp.JSON200.Versions))
	for i := range resp.JSON200.Versions {
		out[i] = tableVersion(&resp.JSON200.Versions[i])
	}
	return out, deref(resp.JSON200.PageToken), nil
}

// ListTableVersions iterates over the versions of a branch ("" is main) of
// table id, oldest first, following page tokens.
func (c *Client) ListTableVersions(ctx context.Context, id []string, branch string) iter.Seq2[TableVersion, error] {
	return paginate(func(token string) ([]TableVersion, string, error) {
		return c.ListTableVersionsPage(ctx, id, &ListVersionsOptions{Branch: branch, PageToken: token})
	})
}

// LatestTableVersion returns the newest version of a branch ("" is main) of
// table id, or nil when it has none.
func (c *Client) LatestTableVersion(ctx context.Context, id []string, branch string) (*TableVersion, error) {
	versions, _, err := c.ListTableVersionsPage(ctx, id, &ListVersionsOptions{Branch: branch, Descending: true, Limit: 1})
	if err != nil || len(versions) == 0 {
		return nil, err
	}
	return &versions[0], nil
}

// VersionCommit describes a version to commit.
type VersionCommit struct {
	Version int64
	// ManifestPath is where the manifest of the version was written.
	ManifestPath string
	ManifestSize *int64
	ETag         *string
	Metadata     map[string]string
	// NamingScheme of the final manifest file: NamingV2 (the default) or
	// NamingV1.
	NamingScheme NamingScheme
	Branch       string // "" is main
}

// CreateTableVersion commits a version of table id. It succeeds for exactly
// one caller per version; the others get ErrConcurrentModification. It
// returns the stored record and the transaction id.
func (c *Client) CreateTableVersion(ctx context.Context, id []string, v VersionCommit) (*TableVersion, string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, "", err
	}
	body := apiclient.CreateTableVersionRequest{
		Id: &id, Version: v.Version, ManifestPath: v.ManifestPath, ManifestSize: v.ManifestSize, ETag: v.ETag,
		NamingScheme: optional(string(v.NamingScheme)), Branch: optional(v.Branch),
	}
	if v.Metadata != nil {
		body.Metadata = &v.Metadata
	}
	resp, err := c.api.CreateTableVersionWithResponse(ctx, path, &apiclient.CreateTableVersionParams{Delimiter: &c.delimiter}, body)
	if err != nil {
		return nil, "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, "", err
	}
	if resp.JSON200.Version == nil {
		return nil, "", errMissing("version")
	}
	out := tableVersion(resp.JSON200.Version)
	return &out, deref(resp.JSON200.TransactionId), nil
}

// DescribeTableVersion returns a version of a branch ("" is main) of table
// id; a nil version means the latest.
func (c *Client) DescribeTableVersion(ctx context.Context, id []string, branch string, version *int64) (*TableVersion, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.DescribeTableVersionWithResponse(ctx, path, &apiclient.DescribeTableVersionParams{Delimiter: &c.delimiter},
		apiclient.DescribeTableVersionRequest{Id: &id, Branch: optional(branch), Version: version})
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	out := tableVersion(&resp.JSON200.Version)
	return &out, nil
}

// VersionRange selects versions Start ≤ v < End; End −1 means through the
// latest version.
type VersionRange struct {
	Start, End int64
}

func apiRanges(ranges []VersionRange) []apiclient.VersionRange {
	out := make([]apiclient.VersionRange, len(ranges))
	for i, r := range ranges {
		out[i] = apiclient.VersionRange{StartVersion: r.Start, EndVersion: r.End}
	}
	return out
}

// DeleteTableVersions deletes the records of the versions in ranges on a
// branch ("" is main) of table id and returns how many existed.
func (c *Client) DeleteTableVersions(ctx context.Context, id []string, branch string, ranges ...VersionRange) (int64, string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return 0, "", err
	}
	resp, err := c.api.BatchDeleteTableVersionsWithResponse(ctx, path, &apiclient.BatchDeleteTableVersionsParams{Delimiter: &c.delimiter},
		apiclient.BatchDeleteTableVersionsRequest{Id: &id, Branch: optional(branch), Ranges: apiRanges(ranges)})
	if err != nil {
		return 0, "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return 0, "", err
	}
	return deref(resp.JSON200.DeletedCount), deref(resp.JSON200.TransactionId), nil
}

// TableCommit is one table's version in CommitVersions.
type TableCommit struct {
	ID []string
	VersionCommit
}

// CommitVersions commits versions of several tables atomically: either all
// are recorded or none is. It returns the records in the order given and the
// transaction id.
func (c *Client) CommitVersions(ctx context.Context, commits ...TableCommit) ([]TableVersion, string, error) {
	entries := make([]apiclient.CreateTableVersionEntry, len(commits))
	for i, tc := range commits {
		e := apiclient.CreateTableVersionEntry{
			Id: tc.ID, Version: tc.Version, ManifestPath: tc.ManifestPath, ManifestSize: tc.ManifestSize, ETag: tc.ETag,
			NamingScheme: optional(string(tc.NamingScheme)), Branch: optional(tc.Branch),
		}
		if tc.Metadata != nil {
			e.Metadata = &tc.Metadata
		}
		entries[i] = e
	}
	resp, err := c.api.BatchCreateTableVersionsWithResponse(ctx, &apiclient.BatchCreateTableVersionsParams{Delimiter: &c.delimiter},
		apiclient.BatchCreateTableVersionsRequest{Entries: entries})
	if err != nil {
		return nil, "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, "", err
	}
	out := make([]TableVersion, len(resp.JSON200.Versions))
	for i := range resp.JSON200.Versions {
		out[i] = tableVersion(&resp.JSON200.Versions[i])
	}
	return out, deref(resp.JSON200.TransactionId), nil
}

// BatchOp is one operation of BatchCommit; set exactly one of its fields
// besides ID.
type BatchOp struct {
	ID             []string
	Declare        *DeclareTableOptions
	CommitVersion  *VersionCommit
	DeleteVersions *BatchDelete
	Deregister     bool
}

// BatchDelete deletes version ranges of a branch ("" is main) in a batch.
type BatchDelete struct {
	Branch string
	Ranges []VersionRange
}

// BatchResult is the result of one BatchOp: the field matching the
// operation is set.
type BatchResult struct {
	Declared     *TableInfo
	Version      *TableVersion
	DeletedCount int64
	Deregistered *DroppedTable
}

// BatchCommit applies declarations, version commits, version deletions and
// deregistrations across tables atomically, in order (later operations see
// earlier ones). It returns one result per operation and the transaction id.
func (c *Client) BatchCommit(ctx context.Context, ops ...BatchOp) ([]BatchResult, string, error) {
	req := apiclient.BatchCommitTablesRequest{Operations: make([]apiclient.CommitTableOperation, len(ops))}
	for i, op := range ops {
		id := op.ID
		o := &req.Operations[i]
		if op.Declare != nil {
			o.DeclareTable = &apiclient.DeclareTableRequest{Id: &id, Location: optional(op.Declare.Location)}
			if op.Declare.Properties != nil {
				o.DeclareTable.Properties = &op.Declare.Properties
			}
		}
		if v := op.CommitVersion; v != nil {
			o.CreateTableVersion = &apiclient.CreateTableVersionRequest{
				Id: &id, Version: v.Version, ManifestPath: v.ManifestPath, ManifestSize: v.ManifestSize, ETag: v.ETag,
				NamingScheme: optional(string(v.NamingScheme)), Branch: optional(v.Branch),
			}
			if v.Metadata != nil {
				o.CreateTableVersion.Metadata = &v.Metadata
			}
		}
		if d := op.DeleteVersions; d != nil {
			o.DeleteTableVersions = &apiclient.BatchDeleteTableVersionsRequest{Id: &id, Branch: optional(d.Branch), Ranges: apiRanges(d.Ranges)}
		}
		if op.Deregister {
			o.DeregisterTable = &apiclient.DeregisterTableRequest{Id: &id}
		}
	}
	resp, err := c.api.BatchCommitTablesWithResponse(ctx, &apiclient.BatchCommitTablesParams{Delimiter: &c.delimiter}, req)
	if err != nil {
		return nil, "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, "", err
	}
	out := make([]BatchResult, len(resp.JSON200.Results))
	for i, r := range resp.JSON200.Results {
		switch {
		case r.DeclareTable != nil:
			d := r.DeclareTable
			out[i].Declared = &TableInfo{Location: deref(d.Location), StorageOptions: propertiesOf(d.StorageOptions),
				Properties: propertiesOf(d.Properties), ManagedVersioning: deref(d.ManagedVersioning), TransactionID: deref(d.TransactionId)}
		case r.CreateTableVersion != nil && r.CreateTableVersion.Version != nil:
			v := tableVersion(r.CreateTableVersion.Version)
			out[i].Version = &v
		case r.DeleteTableVersions != nil:
			out[i].DeletedCount = deref(r.DeleteTableVersions.DeletedCount)
		case r.DeregisterTable != nil:
			d := r.DeregisterTable
			out[i].Deregistered = droppedTable(d.Id, d.Location, d.Properties, d.TransactionId)
		}
	}
	return out, deref(resp.JSON200.TransactionId), nil
}
