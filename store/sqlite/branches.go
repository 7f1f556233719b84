package sqlite

// Branches of managed tables
//
// A managed table's main branch keeps its rows in rows_<table id>; every
// other branch has a line of its own: a rows table rows_<table id>_<line>
// with the same physical columns (allocateColumns adds a column to every
// line), holding the row versions of that branch alone, with the same
// _rowid/_from/_to versioning as main. Creating a branch at version v of
// its parent copies the rows the parent shows at v into the new line, as
// of version v (_from = v), records the parent's schema at v as the
// branch's, and records version v on the branch: the branch's versions
// start at its fork version, and its first write makes v+1. Reads and
// writes on the branch then run the same code as on main against the
// branch's rows table, version records (table_versions with the branch's
// name) and schemas (branch_schemas); nothing they do touches another
// line.
//
// The alternative, one rows table for all branches with a branch column,
// shares unchanged rows between branches, but a row a branch deletes or
// updates is still live on its parent, so every line would need its own
// end marks for inherited rows: every visibility test would become a join
// over the line's ancestry, and every index would have to answer per
// branch. Copying at the fork costs one INSERT … SELECT of the visible rows
// (the price of a version's worth of rows, once) and keeps every read and
// write of every branch exactly the code and the plans of main.
//
// Indexes belong to main: a branch's searches scan exactly (vector
// search) or need main (full-text search answers that the branch has no
// index). Deleting a branch drops its line; dropping the table drops every
// line.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite/internal/sqlitedb"
)

var _ store.BranchedData = (*DB)(nil)

// branchKey is the context key of the branch a data operation acts on.
type branchKey struct{}

// onBranch returns ctx for a data operation on branch ("" is main).
func onBranch(ctx context.Context, branch string) context.Context {
	return context.WithValue(ctx, branchKey{}, branch)
}

// ctxBranch returns the branch the data operation of ctx acts on ("" is
// main).
func ctxBranch(ctx context.Context) string {
	b, _ := ctx.Value(branchKey{}).(string)
	return b
}

// bindBranch points managed table t at the line of the branch ctx names,
// if any. Returns TableBranchNotFound (22) when t has no such branch,
// InvalidTableState (19) when t keeps no rows in lancens or the branch has
// no line (it was created before lancens kept the rows of branches).
func bindBranch(ctx context.Context, tx *Tx, t *tableRow) error {
	b := ctxBranch(ctx)
	if b == "" {
		return nil
	}
	if t.Kind != store.Managed {
		return notManaged(t)
	}
	line, err := branchLine(ctx, tx, t, b)
	if err != nil {
		return err
	}
	t.branch, t.line = b, line
	return nil
}

// branchLine returns the line of branch b of managed table t (0 for main).
// Returns TableBranchNotFound (22), InvalidTableState (19) for a branch
// without a line.
func branchLine(ctx context.Context, tx *Tx, t *tableRow, b string) (int64, error) {
	if b == "" {
		return 0, nil
	}
	var line int64
	err := tx.QueryRowCached(ctx, `SELECT line FROM branch_lines WHERE table_id = ? AND branch = ?`, t.rowID, b).Scan(&line)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if err := checkBranch(ctx, tx, t, b); err != nil {
			return 0, err
		}
		return 0, store.Errorf(store.CodeInvalidTableState,
			"branch %q of table %s has no rows in lancens: it was created before lancens kept the rows of branches; delete it and create it again", b, displayID(t.ID))
	case err != nil:
		return 0, internal("find branch", err)
	}
	return line, nil
}

// cacheID names the rows t reads in the memory cache: the table's uuid on
// main, and the uuid with the line on a branch, whose versions are
// numbered like main's but hold other rows.
func (t *tableRow) cacheID() string {
	if t.line == 0 {
		return t.UUID
	}
	return t.UUID + "#" + strconv.FormatInt(t.line, 10)
}

// lineTable returns the name of the rows table of line of table t.
func lineTable(t *tableRow, line int64) string {
	if line == 0 {
		return fmt.Sprintf("rows_%d", t.rowID)
	}
	return fmt.Sprintf("rows_%d_%d", t.rowID, line)
}

// tableLine is one line of a managed table: its branch and rows table.
type tableLine struct {
	branch string
	line   int64
}

// linesOf returns every line of managed table t: main first, then its
// branches' in line order.
func linesOf(ctx context.Context, tx *Tx, t *tableRow) ([]tableLine, error) {
	out := []tableLine{{}}
	rows, err := tx.QueryCached(ctx, `SELECT branch, line FROM branch_lines WHERE table_id = ? ORDER BY line`, t.rowID)
	if err != nil {
		return nil, internal("list branch lines", err)
	}
	defer rows.Close()
	for rows.Next() {
		var l tableLine
		if err := rows.Scan(&l.branch, &l.line); err != nil {
			return nil, internal("list branch lines", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// onLine returns t pointed at line l.
func (t *tableRow) onLine(l tableLine) *tableRow {
	c := *t
	c.branch, c.line = l.branch, l.line
	return &c
}

// rowsTables returns the rows tables of every line of managed table t.
func rowsTables(ctx context.Context, tx *Tx, t *tableRow) ([]string, error) {
	lines, err := linesOf(ctx, tx, t)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = lineTable(t, l.line)
	}
	return out, nil
}

// forkLine gives the new branch name of managed table t, forked from
// branch from at version v, a line of its own: a copy of the rows from
// shows at v, the schema in effect then, and version v recorded on the
// branch in transaction txID.
func forkLine(ctx context.Context, tx *Tx, t *tableRow, name, from string, v int64, txID string) error {
	parentLine, err := branchLine(ctx, tx, t, from)
	if err != nil {
		return err
	}
	parent := t.onLine(tableLine{from, parentLine})
	ts, err := loadSchema(ctx, tx, parent, v)
	if err != nil {
		return err
	}
	var line int64
	if err := tx.QueryRowCached(ctx, `SELECT coalesce(max(line), 0) + 1 FROM branch_lines WHERE table_id = ?`, t.rowID).Scan(&line); err != nil {
		return internal("create branch", err)
	}
	if _, err := tx.ExecCached(ctx, `INSERT INTO branch_lines (table_id, branch, line) VALUES (?, ?, ?)`, t.rowID, name, line); err != nil {
		return internal("create branch", err)
	}
	child := t.onLine(tableLine{name, line})
	tx.release(child.cacheID()) // a line of a deleted branch had this number
	defs, err := columnDefs(ctx, tx, dataTable(parent))
	if err != nil {
		return err
	}
	if err := createRowsTable(ctx, tx, dataTable(child), defs); err != nil {
		return err
	}
	cols := make([]string, len(defs))
	for i, d := range defs {
		cols[i] = quoteColumn(d.name)
	}
	list := strings.Join(cols, ", ")
	if list != "" {
		list = ", " + list
	}
	if _, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (_rowid, _from%s) SELECT _rowid, ?%s FROM %s WHERE %s ORDER BY _rowid`,
		dataTable(child), list, list, dataTable(parent), visibleAt), v, v, v); err != nil {
		return queryError(ctx, err)
	}
	if err := saveSchema(ctx, tx, child, v, ts.arrow, ts.fields); err != nil {
		return err
	}
	return insertVersionRecord(ctx, tx, child, v, "CreateBranch", txID)
}

// columnDefs returns the physical data columns (c0, c1, …) of the rows
// table name, with their declared types.
func columnDefs(ctx context.Context, tx *Tx, name string) ([]columnDef, error) {
	rows, err := tx.Query(ctx, `SELECT name, type FROM pragma_table_info(?) ORDER BY cid`, name)
	if err != nil {
		return nil, internal("read columns", err)
	}
	defer rows.Close()
	var out []columnDef
	for rows.Next() {
		var d columnDef
		if err := rows.Scan(&d.name, &d.sqlType); err != nil {
			return nil, internal("read columns", err)
		}
		if !strings.HasPrefix(d.name, "_") {
			out = append(out, d)
		}
	}
	return out, rows.Err()
}

// dropLine drops the line of branch name of managed table t, if it has
// one: its rows table, schemas and line record.
func dropLine(ctx context.Context, tx *Tx, t *tableRow, name string) error {
	var line int64
	err := tx.QueryRowCached(ctx, `SELECT line FROM branch_lines WHERE table_id = ? AND branch = ?`, t.rowID, name).Scan(&line)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return internal("delete branch", err)
	}
	tx.release(t.onLine(tableLine{name, line}).cacheID())
	if _, err := tx.Exec(ctx, `DROP TABLE IF EXISTS `+lineTable(t, line)); err != nil {
		return internal("delete branch", err)
	}
	for _, q := range []sqlitedb.Const{
		`DELETE FROM branch_schemas WHERE table_id = ? AND branch = ?`,
		`DELETE FROM branch_lines WHERE table_id = ? AND branch = ?`,
	} {
		if _, err := tx.ExecCached(ctx, q, t.rowID, name); err != nil {
			return internal("delete branch", err)
		}
	}
	return nil
}

// dropLines drops the rows tables of every branch of managed table t (the
// records go with the table).
func dropLines(ctx context.Context, tx *Tx, t *tableRow) error {
	lines, err := linesOf(ctx, tx, t)
	if err != nil {
		return err
	}
	for _, l := range lines[1:] {
		tx.release(t.onLine(l).cacheID())
		if _, err := tx.Exec(ctx, `DROP TABLE IF EXISTS `+lineTable(t, l.line)); err != nil {
			return internal("drop branch rows", err)
		}
	}
	return nil
}

// sweepLines removes what staged writes left in the lines of branches (see
// sweepStaged).
func sweepLines(ctx context.Context, tx *Tx) error {
	type line struct {
		table, line, latest int64
	}
	var lines []line
	rows, err := tx.QueryCached(ctx, `SELECT l.table_id, l.line, coalesce((SELECT max(version) FROM table_versions v
		WHERE v.table_id = l.table_id AND v.branch = l.branch), 0) FROM branch_lines l`)
	if err != nil {
		return internal("sweep staged rows", err)
	}
	for rows.Next() {
		var l line
		if err := rows.Scan(&l.table, &l.line, &l.latest); err != nil {
			rows.Close()
			return internal("sweep staged rows", err)
		}
		lines = append(lines, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return internal("sweep staged rows", err)
	}
	for _, l := range lines {
		if err := sweepTable(ctx, tx, &tableRow{rowID: l.table, line: l.line}, l.latest); err != nil {
			return err
		}
	}
	return nil
}

// saveBranchSchema records s as the schema of branch t.branch from
// version on.
func saveBranchSchema(ctx context.Context, tx *Tx, t *tableRow, version int64, schema []byte, layout string) error {
	if _, err := tx.ExecCached(ctx, `INSERT OR REPLACE INTO branch_schemas (table_id, branch, version, schema, layout) VALUES (?, ?, ?, ?, ?)`,
		t.rowID, t.branch, version, schema, layout); err != nil {
		return internal("save schema", err)
	}
	return nil
}

// schemaRow returns the row (version, schema, layout) of the schema of t,
// on its branch, in effect at version.
func schemaRow(ctx context.Context, tx *Tx, t *tableRow, version int64) *sql.Row {
	if t.branch == "" {
		return tx.QueryRowCached(ctx, `SELECT version, schema, layout FROM table_schemas WHERE table_id = ? AND version <= ?
		ORDER BY version DESC LIMIT 1`, t.rowID, version)
	}
	return tx.QueryRowCached(ctx, `SELECT version, schema, layout FROM branch_schemas WHERE table_id = ? AND branch = ? AND version <= ?
		ORDER BY version DESC LIMIT 1`, t.rowID, t.branch, version)
}

// versionPath is the manifest path recorded for version v of managed
// table t: under the branch's tree for a branch, as Lance lays branches
// out.
func versionPath(t *tableRow, v int64) string {
	root := managedLocation(t.UUID)
	if t.branch != "" {
		root += "/tree/" + t.branch
	}
	return root + "/_versions/" + manifestname.V2.FileName(v)
}

// insertVersionRecord records version v of t's branch, made by op in
// transaction txID. Returns ConcurrentModification (14) when it exists.
func insertVersionRecord(ctx context.Context, tx *Tx, t *tableRow, v int64, op, txID string) error {
	meta, err := encodeMap(map[string]string{"operation": op})
	if err != nil {
		return err
	}
	path := versionPath(t, v)
	if _, err := tx.ExecCached(ctx, `INSERT INTO table_versions (table_id, branch, version, manifest_path, staged_path,
		timestamp_millis, metadata, transaction_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		t.rowID, t.branch, v, path, path, tx.Now().UnixMilli(), meta, txID); err != nil {
		if isConstraint(err) {
			return store.Errorf(store.CodeConcurrentModification, "version %d of table %s already exists on branch %s", v, displayID(t.ID), store.BranchName(t.branch))
		}
		return internal("record version", err)
	}
	return nil
}

// OnBranch implements store.BranchedData.
func (db *DB) OnBranch(branch string) store.ManagedData {
	if branch == "" {
		return db
	}
	return branchData{db: db, branch: branch}
}

// branchData is the data of managed tables on one branch: the operations
// of DB, run with the branch in their context (see bindBranch).
type branchData struct {
	db     *DB
	branch string
}

func (b branchData) ctx(ctx context.Context) context.Context { return onBranch(ctx, b.branch) }

// CreateTable creates a table, on main: a branch is made by CreateBranch.
func (b branchData) CreateTable(ctx context.Context, id []string, t store.NewTable) (*store.Table, store.WriteResult, error) {
	return b.db.CreateTable(ctx, id, t)
}

func (b branchData) Insert(ctx context.Context, id []string, mode store.InsertMode, d store.Data) (store.WriteResult, error) {
	return b.db.Insert(b.ctx(ctx), id, mode, d)
}

func (b branchData) MergeInsert(ctx context.Context, id []string, m store.Merge) (store.WriteResult, error) {
	return b.db.MergeInsert(b.ctx(ctx), id, m)
}

func (b branchData) Update(ctx context.Context, id []string, updates []store.ColumnUpdate, predicate string) (store.WriteResult, error) {
	return b.db.Update(b.ctx(ctx), id, updates, predicate)
}

func (b branchData) Delete(ctx context.Context, id []string, predicate string) (store.WriteResult, error) {
	return b.db.Delete(b.ctx(ctx), id, predicate)
}

func (b branchData) CountRows(ctx context.Context, id []string, version *int64, predicate string) (int64, int64, error) {
	return b.db.CountRows(b.ctx(ctx), id, version, predicate)
}

func (b branchData) Query(ctx context.Context, id []string, q store.Query) (*store.Result, error) {
	return b.db.Query(b.ctx(ctx), id, q)
}

func (b branchData) ExplainQuery(ctx context.Context, id []string, q store.Query, analyze bool) (string, error) {
	return b.db.ExplainQuery(b.ctx(ctx), id, q, analyze)
}

func (b branchData) Restore(ctx context.Context, id []string, version int64) (store.WriteResult, error) {
	return b.db.Restore(b.ctx(ctx), id, version)
}

func (b branchData) Describe(ctx context.Context, id []string, version *int64) (*store.TableData, error) {
	return b.db.Describe(b.ctx(ctx), id, version)
}

func (b branchData) Stats(ctx context.Context, id []string) (*store.TableStats, error) {
	return b.db.Stats(b.ctx(ctx), id)
}

func (b branchData) AddColumns(ctx context.Context, id []string, cols []store.NewColumn) (store.WriteResult, error) {
	return b.db.AddColumns(b.ctx(ctx), id, cols)
}

// QueueBackfill queues a backfill of main: backfills follow main.
func (b branchData) QueueBackfill(ctx context.Context, id []string, column, where string) (string, error) {
	return b.db.QueueBackfill(ctx, id, column, where)
}

// Backfill fills a column of main, as the job describes.
func (b branchData) Backfill(ctx context.Context, job store.BackfillColumn) (store.WriteResult, error) {
	return b.db.Backfill(ctx, job)
}

func (b branchData) AlterColumns(ctx context.Context, id []string, alts []store.ColumnAlteration) (store.WriteResult, error) {
	return b.db.AlterColumns(b.ctx(ctx), id, alts)
}

func (b branchData) DropColumns(ctx context.Context, id []string, paths []string) (store.WriteResult, error) {
	return b.db.DropColumns(b.ctx(ctx), id, paths)
}

func (b branchData) UpdateFieldMetadata(ctx context.Context, id []string, updates []store.FieldMetadataUpdate) (store.WriteResult, map[string]map[string]string, error) {
	return b.db.UpdateFieldMetadata(b.ctx(ctx), id, updates)
}

func (b branchData) UpdateSchemaMetadata(ctx context.Context, id []string, set map[string]string) (store.WriteResult, map[string]string, error) {
	return b.db.UpdateSchemaMetadata(b.ctx(ctx), id, set)
}
