package client

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/gen/apiclient"
)

// ListTablesPage returns one page of the names of the tables directly in
// namespace ns and the token of the next page ("" at the end). Declared
// tables without data are included when includeDeclared is true.
func (c *Client) ListTablesPage(ctx context.Context, ns []string, pageToken string, limit int, includeDeclared bool) ([]string, string, error) {
	path, err := c.pathID(ns)
	if err != nil {
		return nil, "", err
	}
	params := &apiclient.ListTablesParams{Delimiter: &c.delimiter, PageToken: optional(pageToken), Limit: positive(limit), IncludeDeclared: &includeDeclared}
	resp, err := c.api.ListTablesWithResponse(ctx, path, params)
	if err != nil {
		return nil, "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, "", err
	}
	return resp.JSON200.Tables, deref(resp.JSON200.PageToken), nil
}

// ListTables iterates over the names of the tables in namespace ns,
// declared ones included, following page tokens.
func (c *Client) ListTables(ctx context.Context, ns []string) iter.Seq2[string, error] {
	return paginate(func(token string) ([]string, string, error) {
		return c.ListTablesPage(ctx, ns, token, 0, true)
	})
}

// ListAllTablesPage returns one page of the identifiers of every table of the
// catalog and the token of the next page ("" at the end).
func (c *Client) ListAllTablesPage(ctx context.Context, pageToken string, limit int, includeDeclared bool) ([][]string, string, error) {
	params := &apiclient.ListAllTablesParams{Delimiter: &c.delimiter, PageToken: optional(pageToken), Limit: positive(limit), IncludeDeclared: &includeDeclared}
	resp, err := c.api.ListAllTablesWithResponse(ctx, params)
	if err != nil {
		return nil, "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, "", err
	}
	ids := make([][]string, len(resp.JSON200.Tables))
	for i, t := range resp.JSON200.Tables {
		ids[i] = strings.Split(t, c.delimiter)
	}
	return ids, deref(resp.JSON200.PageToken), nil
}

// ListAllTables iterates over the identifiers of every table, declared ones
// included, following page tokens.
func (c *Client) ListAllTables(ctx context.Context) iter.Seq2[[]string, error] {
	return paginate(func(token string) ([][]string, string, error) {
		return c.ListAllTablesPage(ctx, token, 0, true)
	})
}

// TableInfo is what the server says about a table it declared or registered.
type TableInfo struct {
	Location       string
	StorageOptions map[string]string
	Properties     map[string]string
	// ManagedVersioning means Lance clients must commit versions through
	// this catalog (CreateTableVersion) rather than on storage alone.
	ManagedVersioning bool
	TransactionID     string
}

// DeclareTableOptions are the optional parts of DeclareTable.
type DeclareTableOptions struct {
	// Location for the table's data; empty lets the server choose.
	Location   string
	Properties map[string]string
}

// DeclareTable reserves table id and returns where its data goes. opts may
// be nil.
func (c *Client) DeclareTable(ctx context.Context, id []string, opts *DeclareTableOptions) (*TableInfo, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	body := apiclient.DeclareTableRequest{Id: &id}
	if opts != nil {
		body.Location = optional(opts.Location)
		if opts.Properties != nil {
			body.Properties = &opts.Properties
		}
	}
	resp, err := c.api.DeclareTableWithResponse(ctx, path, &apiclient.DeclareTableParams{Delimiter: &c.delimiter}, body)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	r := resp.JSON200
	return &TableInfo{
		Location: deref(r.Location), StorageOptions: propertiesOf(r.StorageOptions), Properties: propertiesOf(r.Properties),
		ManagedVersioning: deref(r.ManagedVersioning), TransactionID: deref(r.TransactionId),
	}, nil
}

// RegisterTableOptions are the optional parts of RegisterTable.
type RegisterTableOptions struct {
	// Mode is ModeCreate (the default: fail if the name is taken) or
	// ModeOverwrite.
	Mode       Mode
	Properties map[string]string
}

// RegisterTable catalogs existing Lance data at location as table id. opts
// may be nil.
func (c *Client) RegisterTable(ctx context.Context, id []string, location string, opts *RegisterTableOptions) (*TableInfo, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	body := apiclient.RegisterTableRequest{Id: &id, Location: location}
	if opts != nil {
		body.Mode = optional(string(opts.Mode))
		if opts.Properties != nil {
			body.Properties = &opts.Properties
		}
	}
	resp, err := c.api.RegisterTableWithResponse(ctx, path, &apiclient.RegisterTableParams{Delimiter: &c.delimiter}, body)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	r := resp.JSON200
	return &TableInfo{Location: deref(r.Location), Properties: propertiesOf(r.Properties), StorageOptions: map[string]string{},
		TransactionID: deref(r.TransactionId)}, nil
}

// DescribeTableOptions select what DescribeTable reports.
type DescribeTableOptions struct {
	// Version, Tag and Branch select the version described; Tag cannot be
	// combined with the other two.
	Version *int64
	Tag     string
	Branch  string
	// WithTableURI asks for TableURI.
	WithTableURI bool
	// LoadDetailedMetadata asks for the detailed fields (Table, Namespace,
	// Version, Schema, Stats); lancens always sends them for the tables
	// whose rows it keeps.
	LoadDetailedMetadata bool
	// CheckDeclared asks for IsOnlyDeclared.
	CheckDeclared bool
}

// TableDescription is what DescribeTable reports. Fields the server did not
// fill are zero.
type TableDescription struct {
	Location          string
	TableURI          string
	StorageOptions    map[string]string
	Properties        map[string]string
	ManagedVersioning bool
	// IsOnlyDeclared is set when asked for: true while a declared table has
	// no data.
	IsOnlyDeclared *bool
	Table          string
	Namespace      []string
	Version        *int64
	Schema         *arrow.Schema
	Stats          *TableBasicStats
	Metadata       map[string]string
}

// TableBasicStats are the layout statistics DescribeTable may report.
type TableBasicStats struct {
	NumDeletedRows int64
	NumFragments   int64
}

// DescribeTable describes table id. opts may be nil. Returns
// ErrTableNotFound, or ErrTableVersionNotFound, ErrTableTagNotFound or
// ErrTableBranchNotFound for a version that does not exist.
func (c *Client) DescribeTable(ctx context.Context, id []string, opts *DescribeTableOptions) (*TableDescription, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	body := apiclient.DescribeTableRequest{Id: &id, Branch: c.branchParam()}
	if opts != nil {
		body.Version, body.Tag = opts.Version, optional(opts.Tag)
		switch {
		case opts.Branch != "":
			body.Branch = &opts.Branch
		case opts.Tag != "":
			body.Branch = nil // a tag names its version alone
		}
		body.WithTableUri = optionalTrue(opts.WithTableURI)
		body.LoadDetailedMetadata = optionalTrue(opts.LoadDetailedMetadata)
		body.CheckDeclared = optionalTrue(opts.CheckDeclared)
	}
	resp, err := c.api.DescribeTableWithResponse(ctx, path, &apiclient.DescribeTableParams{Delimiter: &c.delimiter}, body)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	r := resp.JSON200
	out := &TableDescription{
		Location: deref(r.Location), TableURI: deref(r.TableUri), StorageOptions: propertiesOf(r.StorageOptions),
		Properties: propertiesOf(r.Properties), ManagedVersioning: deref(r.ManagedVersioning), IsOnlyDeclared: r.IsOnlyDeclared,
		Table: deref(r.Table), Namespace: deref(r.Namespace), Version: r.Version,
	}
	if r.Stats != nil {
		out.Stats = &TableBasicStats{NumDeletedRows: int64(r.Stats.NumDeletedRows), NumFragments: int64(r.Stats.NumFragments)}
	}
	if r.Metadata != nil {
		out.Metadata = *r.Metadata
	}
	if r.Schema != nil {
		// The generated type drops what the spec's type names leave out
		// (time units, time zones); read the schema from the body itself.
		var raw struct {
			Schema *jsonSchema `json:"schema"`
		}
		if err := json.Unmarshal(resp.Body, &raw); err != nil {
			return nil, errorf(CodeInternal, "the server's table schema is not valid JSON: %v", err)
		}
		if out.Schema, err = raw.Schema.arrow(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// TableExists reports whether table id exists, and, when version is not nil,
// whether it has that version.
func (c *Client) TableExists(ctx context.Context, id []string, version *int64) (bool, error) {
	path, err := c.pathID(id)
	if err != nil {
		return false, err
	}
	resp, err := c.api.TableExistsWithResponse(ctx, path, &apiclient.TableExistsParams{Delimiter: &c.delimiter}, apiclient.TableExistsRequest{Id: &id, Version: version})
	if err != nil {
		return false, err
	}
	err = checkResponse(resp.HTTPResponse, resp.Body)
	if errors.Is(err, ErrTableNotFound) || errors.Is(err, ErrNamespaceNotFound) || errors.Is(err, ErrTableVersionNotFound) {
		return false, nil
	}
	return err == nil, err
}

// DroppedTable is what DropTable and DeregisterTable report.
type DroppedTable struct {
	ID         []string
	Location   string
	Properties map[string]string
	// TransactionID tracks the operation; after a drop of data the server
	// owns, its status says when the data is gone.
	TransactionID string
}

func droppedTable(id *[]string, location *string, props *map[string]string, txID *string) *DroppedTable {
	return &DroppedTable{ID: deref(id), Location: deref(location), Properties: propertiesOf(props), TransactionID: deref(txID)}
}

// DropTable drops table id and its data.
func (c *Client) DropTable(ctx context.Context, id []string) (*DroppedTable, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.DropTableWithResponse(ctx, path, &apiclient.DropTableParams{Delimiter: &c.delimiter})
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	r := resp.JSON200
	return droppedTable(r.Id, r.Location, r.Properties, r.TransactionId), nil
}

// DeregisterTable removes table id from the catalog and keeps its data.
func (c *Client) DeregisterTable(ctx context.Context, id []string) (*DroppedTable, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.DeregisterTableWithResponse(ctx, path, &apiclient.DeregisterTableParams{Delimiter: &c.delimiter}, apiclient.DeregisterTableRequest{Id: &id})
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	r := resp.JSON200
	return droppedTable(r.Id, r.Location, r.Properties, r.TransactionId), nil
}

// RenameTable renames table id to newName, moving it to newNamespace unless
// that is nil. It returns the transaction id.
func (c *Client) RenameTable(ctx context.Context, id []string, newNamespace []string, newName string) (string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return "", err
	}
	body := apiclient.RenameTableRequest{Id: &id, NewTableName: newName}
	if newNamespace != nil {
		body.NewNamespaceId = &newNamespace
	}
	resp, err := c.api.RenameTableWithResponse(ctx, path, &apiclient.RenameTableParams{Delimiter: &c.delimiter}, body)
	if err != nil {
		return "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	return deref(resp.JSON200.TransactionId), nil
}

func optionalTrue(b bool) *bool {
	if !b {
		return nil
	}
	return &b
}
