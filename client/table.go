package client

import (
	"context"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Table is a handle on one table whose rows the server keeps, in the manner
// of the LanceDB SDKs: writes, queries, versions, indexes and schema
// changes of that table. Making a handle sends nothing; its calls fail with
// ErrTableNotFound if the table does not exist. A handle reads the latest
// version unless it was checked out at another (see Checkout); writes go
// through a handle of the latest version only. A handle acts on the main
// branch of the table, or on the branch of a client made by OnBranch.
// Handles are safe for concurrent use.
type Table struct {
	c       *Client
	id      []string
	version *int64
}

// Table returns a handle on the table with the given identifier: the names
// of its namespaces, then its own.
func (c *Client) Table(id ...string) *Table {
	return &Table{c: c, id: slices.Clone(id)}
}

// ID returns the table's identifier.
func (t *Table) ID() []string { return slices.Clone(t.id) }

// CheckedOutVersion returns the version the handle reads, or false when it
// reads the latest.
func (t *Table) CheckedOutVersion() (int64, bool) {
	if t.version == nil {
		return 0, false
	}
	return *t.version, true
}

// writable returns an InvalidInput (13) error for a handle checked out at a
// version.
func (t *Table) writable() error {
	if t.version != nil {
		return errorf(CodeInvalidInput, "table %q is checked out at version %d: write through CheckoutLatest", t.id, *t.version)
	}
	return nil
}

// Create creates the table with the schema and rows of data (make an empty
// table with Structs([]T{}) or Records(schema)). opts may be nil. Returns
// ErrTableAlreadyExists (with ModeCreate), ErrNamespaceNotFound.
func (t *Table) Create(ctx context.Context, data Data, opts *CreateTableOptions) (*CreatedTable, error) {
	if err := t.writable(); err != nil {
		return nil, err
	}
	return t.c.createTable(ctx, t.id, data, opts)
}

// Add appends the rows of data and returns the new version. Returns
// ErrTableSchemaValidationError when they do not fit the table's schema.
func (t *Table) Add(ctx context.Context, data Data) (*WriteResult, error) {
	if err := t.writable(); err != nil {
		return nil, err
	}
	return t.c.insert(ctx, t.id, data, ModeAppend)
}

// Overwrite replaces every row with the rows of data. Returns the errors of
// Add.
func (t *Table) Overwrite(ctx context.Context, data Data) (*WriteResult, error) {
	if err := t.writable(); err != nil {
		return nil, err
	}
	return t.c.insert(ctx, t.id, data, ModeOverwrite)
}

// MergeInsert starts a merge of rows into the table, matched on the key
// columns on: say what happens to matched and unmatched rows, then Execute.
func (t *Table) MergeInsert(on ...string) *MergeInsert {
	return &MergeInsert{t: t, opts: MergeInsertOptions{On: on}}
}

// MergeInsert is a merge of source rows into a table by key, built step by
// step (each step returns it) and run by Execute.
type MergeInsert struct {
	t    *Table
	opts MergeInsertOptions
}

// WhenMatchedUpdateAll overwrites target rows that match a source row with
// it.
func (m *MergeInsert) WhenMatchedUpdateAll() *MergeInsert {
	m.opts.WhenMatchedUpdateAll = true
	return m
}

// WhenMatchedUpdateWhere overwrites matched target rows for which the SQL
// condition holds; it reads the two rows as target.col and source.col.
func (m *MergeInsert) WhenMatchedUpdateWhere(condition string) *MergeInsert {
	m.opts.WhenMatchedUpdateAll = true
	m.opts.WhenMatchedUpdateAllFilter = condition
	return m
}

// WhenNotMatchedInsertAll inserts source rows that match no target row.
func (m *MergeInsert) WhenNotMatchedInsertAll() *MergeInsert {
	m.opts.WhenNotMatchedInsertAll = true
	return m
}

// WhenNotMatchedBySourceDelete deletes target rows that match no source
// row.
func (m *MergeInsert) WhenNotMatchedBySourceDelete() *MergeInsert {
	m.opts.WhenNotMatchedBySourceDelete = true
	return m
}

// WhenNotMatchedBySourceDeleteWhere deletes the target rows that match no
// source row and for which the SQL condition holds.
func (m *MergeInsert) WhenNotMatchedBySourceDeleteWhere(condition string) *MergeInsert {
	m.opts.WhenNotMatchedBySourceDeleteFilter = condition
	return m
}

// Timeout bounds the merge on the server.
func (m *MergeInsert) Timeout(d time.Duration) *MergeInsert {
	m.opts.Timeout = d
	return m
}

// UseIndex says whether the server may use an index on the key columns.
func (m *MergeInsert) UseIndex(use bool) *MergeInsert {
	m.opts.UseIndex = &use
	return m
}

// Execute merges the rows of data and reports what changed. Returns
// ErrTableColumnNotFound for an unknown key column, ErrInvalidInput when
// several source rows match one target row.
func (m *MergeInsert) Execute(ctx context.Context, data Data) (*WriteResult, error) {
	if err := m.t.writable(); err != nil {
		return nil, err
	}
	return m.t.c.mergeInsert(ctx, m.t.id, data, m.opts)
}

// Update sets columns to Go values (written as SQL literals, see
// SQLLiteral) in the rows for which the SQL condition where holds ("" for
// every row). Returns ErrTableColumnNotFound for an unknown column,
// ErrInvalidInput for a value with no SQL literal or a malformed where.
func (t *Table) Update(ctx context.Context, where string, values map[string]any) (*WriteResult, error) {
	exprs := make(map[string]string, len(values))
	for col, v := range values {
		lit, err := SQLLiteral(v)
		if err != nil {
			return nil, invalid("column %s: %v", col, err)
		}
		exprs[col] = lit
	}
	return t.UpdateSQL(ctx, where, exprs)
}

// UpdateSQL sets columns to SQL expressions, which may read the row's
// current values ("price * 1.1"), in the rows for which where holds ("" for
// every row). Returns the errors of Update.
func (t *Table) UpdateSQL(ctx context.Context, where string, exprs map[string]string) (*WriteResult, error) {
	if err := t.writable(); err != nil {
		return nil, err
	}
	updates := make([][2]string, 0, len(exprs))
	for _, col := range slices.Sorted(maps.Keys(exprs)) {
		updates = append(updates, [2]string{col, exprs[col]})
	}
	return t.c.Update(ctx, t.id, updates, where)
}

// Delete deletes the rows for which the SQL condition where holds. Returns
// ErrInvalidInput for a malformed condition.
func (t *Table) Delete(ctx context.Context, where string) (*WriteResult, error) {
	if err := t.writable(); err != nil {
		return nil, err
	}
	return t.c.Delete(ctx, t.id, where)
}

// CountRows counts the rows for which the SQL condition where holds ("" for
// every row).
func (t *Table) CountRows(ctx context.Context, where string) (int64, error) {
	return t.c.CountRows(ctx, t.id, where, t.version)
}

// Describe describes the version the handle reads.
func (t *Table) Describe(ctx context.Context) (*TableDescription, error) {
	return t.c.DescribeTable(ctx, t.id, &DescribeTableOptions{Version: t.version, LoadDetailedMetadata: true})
}

// Schema returns the schema of the version the handle reads.
func (t *Table) Schema(ctx context.Context) (*arrow.Schema, error) {
	d, err := t.Describe(ctx)
	if err != nil {
		return nil, err
	}
	if d.Schema == nil {
		return nil, errorf(CodeInvalidTableState, "the server reports no schema for table %q", t.id)
	}
	return d.Schema, nil
}

// Version returns the version the handle reads: the checked-out one, or
// the latest. Returns ErrTableVersionNotFound for a table with no version.
func (t *Table) Version(ctx context.Context) (int64, error) {
	if t.version != nil {
		return *t.version, nil
	}
	d, err := t.Describe(ctx)
	if err != nil {
		return 0, err
	}
	if d.Version == nil {
		return 0, errorf(CodeTableVersionNotFound, "table %q has no version", t.id)
	}
	return *d.Version, nil
}

// Versions iterates over the versions of the table, oldest first.
func (t *Table) Versions(ctx context.Context) iter.Seq2[TableVersion, error] {
	return t.c.ListTableVersions(ctx, t.id, t.c.branch)
}

// Checkout returns a handle that reads version (time travel); it cannot
// write. Returns ErrTableVersionNotFound if there is no such version.
func (t *Table) Checkout(ctx context.Context, version int64) (*Table, error) {
	if _, err := t.c.DescribeTableVersion(ctx, t.id, t.c.branch, &version); err != nil {
		return nil, err
	}
	return &Table{c: t.c, id: t.id, version: &version}, nil
}

// CheckoutTag returns a handle that reads the version tag names. Returns
// ErrTableTagNotFound if there is no such tag, ErrInvalidInput for a tag on
// another branch than the handle's (main, unless its client is OnBranch).
func (t *Table) CheckoutTag(ctx context.Context, tag string) (*Table, error) {
	g, err := t.c.GetTableTag(ctx, t.id, tag)
	if err != nil {
		return nil, err
	}
	if g.Branch != t.c.branch {
		return nil, invalid("tag %q names a version of branch %q; this Table reads branch %q", tag, g.Branch, t.c.branch)
	}
	return &Table{c: t.c, id: t.id, version: &g.Version}, nil
}

// CheckoutLatest returns a handle that reads the latest version and can
// write.
func (t *Table) CheckoutLatest() *Table {
	return &Table{c: t.c, id: t.id}
}

// Restore makes the rows and schema of version the table's new latest
// version. Returns ErrTableVersionNotFound if there is no such version.
func (t *Table) Restore(ctx context.Context, version int64) error {
	_, err := t.c.RestoreTable(ctx, t.id, version)
	return err
}

// Tags returns the tags of the table.
func (t *Table) Tags() Tags { return Tags{t: t} }

// Tags are the named versions of a table.
type Tags struct{ t *Table }

// List iterates over the tags, by name.
func (g Tags) List(ctx context.Context) iter.Seq2[Tag, error] {
	return g.t.c.ListTableTags(ctx, g.t.id)
}

// Version returns the version tag names. Returns ErrTableTagNotFound.
func (g Tags) Version(ctx context.Context, tag string) (int64, error) {
	t, err := g.t.c.GetTableTag(ctx, g.t.id, tag)
	if err != nil {
		return 0, err
	}
	return t.Version, nil
}

// Create names version with tag. Returns ErrTableTagAlreadyExists,
// ErrTableVersionNotFound.
func (g Tags) Create(ctx context.Context, tag string, version int64) error {
	_, err := g.t.c.CreateTableTag(ctx, g.t.id, tag, version, g.t.c.branch)
	return err
}

// Update points tag at another version. Returns ErrTableTagNotFound,
// ErrTableVersionNotFound.
func (g Tags) Update(ctx context.Context, tag string, version int64) error {
	_, err := g.t.c.UpdateTableTag(ctx, g.t.id, tag, version, g.t.c.branch)
	return err
}

// Delete deletes tag. Returns ErrTableTagNotFound.
func (g Tags) Delete(ctx context.Context, tag string) error {
	_, err := g.t.c.DeleteTableTag(ctx, g.t.id, tag)
	return err
}

// CreateIndex starts building an index of cfg's type on column; vector
// indexes build in the background (see WaitForIndex). opts may be nil.
// Returns ErrTableIndexAlreadyExists if the name is taken,
// ErrTableColumnNotFound for an unknown column.
func (t *Table) CreateIndex(ctx context.Context, column string, cfg IndexConfig, opts *IndexOptions) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.c.CreateIndex(ctx, t.id, column, cfg, opts)
	return err
}

// ListIndices returns the indexes of the version the handle reads.
func (t *Table) ListIndices(ctx context.Context) ([]Index, error) {
	var out []Index
	for ix, err := range t.c.ListIndices(ctx, t.id, t.version) {
		if err != nil {
			return nil, err
		}
		out = append(out, ix)
	}
	return out, nil
}

// IndexStats returns the statistics of index name. Returns
// ErrTableIndexNotFound.
func (t *Table) IndexStats(ctx context.Context, name string) (*IndexStats, error) {
	return t.c.IndexStats(ctx, t.id, name, t.version)
}

// DropIndex drops index name. Returns ErrTableIndexNotFound.
func (t *Table) DropIndex(ctx context.Context, name string) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.c.DropIndex(ctx, t.id, name)
	return err
}

// WaitForIndex waits until the named indexes are built, polling the
// server; ctx bounds the wait. Returns ErrTableIndexNotFound for a name the
// table has no index of, an Internal (18) error for a build that failed,
// or the context's error.
func (t *Table) WaitForIndex(ctx context.Context, names ...string) error {
	delay := 50 * time.Millisecond
	for {
		indexes, err := t.ListIndices(ctx)
		if err != nil {
			return err
		}
		status := make(map[string]string, len(indexes))
		for _, ix := range indexes {
			status[ix.Name] = ix.Status
		}
		pending := false
		for _, name := range names {
			s, ok := status[name]
			switch {
			case !ok:
				return errorf(CodeTableIndexNotFound, "table %q has no index %q", t.id, name)
			case indexBuilding(s):
				pending = true
			case strings.EqualFold(s, "FAILED"):
				return errorf(CodeInternal, "the build of index %q of table %q failed", name, t.id)
			}
		}
		if !pending {
			return nil
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
		delay = min(2*delay, time.Second)
	}
}

// AddColumns adds columns computed from the others and returns the
// version it made. Returns the errors of Client.AddColumns.
func (t *Table) AddColumns(ctx context.Context, cols ...NewColumn) (int64, error) {
	if err := t.writable(); err != nil {
		return 0, err
	}
	return t.c.AddColumns(ctx, t.id, cols...)
}

// AlterColumns renames, changes the nullability of or casts columns and
// returns the version it made. Returns the errors of Client.AlterColumns.
func (t *Table) AlterColumns(ctx context.Context, alts ...ColumnAlteration) (int64, error) {
	if err := t.writable(); err != nil {
		return 0, err
	}
	return t.c.AlterColumns(ctx, t.id, alts...)
}

// DropColumns drops columns and returns the version it made. Returns
// ErrTableColumnNotFound.
func (t *Table) DropColumns(ctx context.Context, columns ...string) (int64, error) {
	if err := t.writable(); err != nil {
		return 0, err
	}
	return t.c.DropColumns(ctx, t.id, columns...)
}

// Stats returns the size statistics of the table.
func (t *Table) Stats(ctx context.Context) (*TableStats, error) {
	return t.c.TableStats(ctx, t.id)
}

// Search starts a query for the rows whose vectors are nearest to vector.
func (t *Table) Search(vector []float32) *Query { return newQuery(t).NearestTo(vector) }

// FullTextSearch starts a query for the rows matching the words of text in
// the given columns (none: every column with a full-text index).
func (t *Table) FullTextSearch(text string, columns ...string) *Query {
	return newQuery(t).FullTextSearch(text, columns...)
}

// Query starts a scan of the table's rows.
func (t *Table) Query() *Query { return newQuery(t) }
