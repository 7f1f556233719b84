package client

import (
	"context"
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/gen/apiclient"
)

// NewColumn is a column AddColumns adds, defined by a SQL expression over
// the row's other columns.
type NewColumn struct {
	Name       string
	Expression string
	// Computed keeps Expression as the column's definition instead of
	// evaluating it now: the column starts out null and BackfillColumn
	// fills it.
	Computed bool
}

// AddColumns adds columns to table id and returns the version it made.
// Returns ErrInvalidInput for a name in use or a malformed expression,
// ErrTableColumnNotFound for an expression naming an unknown column.
func (c *Client) AddColumns(ctx context.Context, id []string, cols ...NewColumn) (int64, error) {
	path, err := c.pathID(id)
	if err != nil {
		return 0, err
	}
	entries := make([]apiclient.AddColumnsEntry, len(cols))
	for i, col := range cols {
		entries[i].Name = col.Name
		if col.Computed {
			entries[i].Computed = &col.Expression
		} else {
			entries[i].Expression = &col.Expression
		}
	}
	resp, err := c.api.AlterTableAddColumnsWithResponse(ctx, path, &apiclient.AlterTableAddColumnsParams{Delimiter: &c.delimiter},
		apiclient.AlterTableAddColumnsRequest{Id: &id, Branch: c.branchParam(), NewColumns: entries})
	if err != nil {
		return 0, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return 0, err
	}
	return resp.JSON200.Version, nil
}

// ColumnAlteration changes one column; zero fields leave that aspect alone.
type ColumnAlteration struct {
	// Path is the column's field path.
	Path string
	// Rename gives it a new name.
	Rename string
	// Nullable allows (true) or forbids (false) nulls.
	Nullable *bool
	// DataType casts it to another type.
	DataType arrow.DataType
}

// AlterColumns renames, changes the nullability of, or casts columns of
// table id, and returns the version it made. Returns
// ErrTableColumnNotFound for an unknown path, ErrInvalidInput for a change
// the data does not allow.
func (c *Client) AlterColumns(ctx context.Context, id []string, alts ...ColumnAlteration) (int64, error) {
	path, err := c.pathID(id)
	if err != nil {
		return 0, err
	}
	entries := make([]apiclient.AlterColumnsEntry, len(alts))
	for i, a := range alts {
		entries[i] = apiclient.AlterColumnsEntry{Path: a.Path, Rename: optional(a.Rename), Nullable: a.Nullable}
		if a.DataType != nil {
			// The spec types data_type as a free-form object: send the
			// JSON form of the type through a map.
			var m map[string]any
			b, _ := json.Marshal(typeJSON(a.DataType))
			_ = json.Unmarshal(b, &m)
			entries[i].DataType = &m
		}
	}
	resp, err := c.api.AlterTableAlterColumnsWithResponse(ctx, path, &apiclient.AlterTableAlterColumnsParams{Delimiter: &c.delimiter},
		apiclient.AlterTableAlterColumnsRequest{Id: &id, Branch: c.branchParam(), Alterations: entries})
	if err != nil {
		return 0, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return 0, err
	}
	return resp.JSON200.Version, nil
}

// DropColumns drops columns of table id and returns the version it made.
// Returns ErrTableColumnNotFound for an unknown column.
func (c *Client) DropColumns(ctx context.Context, id []string, columns ...string) (int64, error) {
	path, err := c.pathID(id)
	if err != nil {
		return 0, err
	}
	resp, err := c.api.AlterTableDropColumnsWithResponse(ctx, path, &apiclient.AlterTableDropColumnsParams{Delimiter: &c.delimiter},
		apiclient.AlterTableDropColumnsRequest{Id: &id, Branch: c.branchParam(), Columns: columns})
	if err != nil {
		return 0, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return 0, err
	}
	return resp.JSON200.Version, nil
}

// BackfillColumn starts filling the computed column of table id for the
// rows matching where ("" for all) and returns the id of the job, a
// transaction id whose status follows it (see DescribeTransaction).
// Returns ErrTableColumnNotFound if there is no such column, ErrInvalidInput
// if it is not computed.
func (c *Client) BackfillColumn(ctx context.Context, id []string, column, where string) (string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return "", err
	}
	resp, err := c.api.AlterTableBackfillColumnsWithResponse(ctx, path, &apiclient.AlterTableBackfillColumnsParams{Delimiter: &c.delimiter},
		apiclient.AlterTableBackfillColumnsRequest{Id: &id, Branch: c.branchParam(), Column: column, Where: optional(where)})
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

// FieldMetadataUpdate changes the metadata of one field.
type FieldMetadataUpdate struct {
	// Path is the field's path.
	Path string
	// Set holds the entries to write; a nil value removes the key.
	Set map[string]*string
	// Replace makes Set the field's whole metadata instead of merging it in.
	Replace bool
}

// UpdateFieldMetadata changes the metadata of fields of table id. It
// returns the version it made and, by field path, each field's metadata
// afterwards. Returns ErrTableColumnNotFound for an unknown path.
func (c *Client) UpdateFieldMetadata(ctx context.Context, id []string, updates ...FieldMetadataUpdate) (int64, map[string]map[string]string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return 0, nil, err
	}
	entries := make([]apiclient.UpdateFieldMetadataEntry, len(updates))
	for i, u := range updates {
		entries[i] = apiclient.UpdateFieldMetadataEntry{Path: u.Path, Metadata: u.Set, Replace: optionalTrue(u.Replace)}
		if entries[i].Metadata == nil {
			entries[i].Metadata = map[string]*string{}
		}
	}
	resp, err := c.api.UpdateFieldMetadataWithResponse(ctx, path, &apiclient.UpdateFieldMetadataParams{Delimiter: &c.delimiter},
		apiclient.UpdateFieldMetadataRequest{Id: &id, Branch: c.branchParam(), Updates: entries})
	if err != nil {
		return 0, nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return 0, nil, err
	}
	return resp.JSON200.Version, deref(resp.JSON200.Fields), nil
}

// UpdateSchemaMetadata sets entries of the schema metadata of table id and
// returns the schema metadata afterwards. Returns ErrTableNotFound.
func (c *Client) UpdateSchemaMetadata(ctx context.Context, id []string, set map[string]string) (map[string]string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	if set == nil {
		set = map[string]string{}
	}
	resp, err := c.api.UpdateTableSchemaMetadataWithResponse(ctx, path, &apiclient.UpdateTableSchemaMetadataParams{Delimiter: &c.delimiter, Branch: c.branchParam()}, set)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	return propertiesOf(resp.JSON200), nil
}
