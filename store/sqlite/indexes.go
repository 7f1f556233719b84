package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/vecindex"
)

var _ store.Indexes = (*DB)(nil)

// indexParams is what table_indexes.params holds.
type indexParams struct {
	Vector store.VectorIndexParams `json:"vector,omitzero"`
	Text   store.TextIndexParams   `json:"text,omitzero"`
}

// indexRow is a row of table_indexes.
type indexRow struct {
	rowID        int64
	name, uuid   string
	indexType    string
	columnPath   string
	physical     string
	metric       string
	params       indexParams
	status       string
	errText      string
	createdAt    time.Time
	builtVersion sql.NullInt64
	maxRowID     sql.NullInt64
	size         int64
}

const indexColumns = `id, name, uuid, index_type, column_path, physical, metric, params, status, coalesce(error, ''),
	created_at, built_version, max_rowid, coalesce(length(data), 0)`

func scanIndex(row interface{ Scan(...any) error }) (*indexRow, error) {
	var r indexRow
	var params string
	var created int64
	if err := row.Scan(&r.rowID, &r.name, &r.uuid, &r.indexType, &r.columnPath, &r.physical, &r.metric, &params, &r.status,
		&r.errText, &created, &r.builtVersion, &r.maxRowID, &r.size); err != nil {
		return nil, err
	}
	r.createdAt = msTime(created)
	if err := json.Unmarshal([]byte(params), &r.params); err != nil {
		return nil, internal("decode index params", err)
	}
	return &r, nil
}

func findIndex(ctx context.Context, tx *Tx, t *tableRow, name string) (*indexRow, error) {
	r, err := scanIndex(tx.QueryRowCached(ctx, `SELECT `+indexColumns+` FROM table_indexes WHERE table_id = ? AND name = ?`, t.rowID, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.Errorf(store.CodeTableIndexNotFound, "index %q of table %s not found", name, displayID(t.ID))
	}
	if err != nil {
		return nil, internal("find index", err)
	}
	return r, nil
}

// listIndexRows returns the indexes of t by name; none on a branch, as
// indexes belong to main.
func listIndexRows(ctx context.Context, tx *Tx, t *tableRow) ([]*indexRow, error) {
	if t.line != 0 {
		return nil, nil
	}
	rows, err := tx.QueryCached(ctx, `SELECT `+indexColumns+` FROM table_indexes WHERE table_id = ? ORDER BY name`, t.rowID)
	if err != nil {
		return nil, internal("list indexes", err)
	}
	defer rows.Close()
	var out []*indexRow
	for rows.Next() {
		r, err := scanIndex(rows)
		if err != nil {
			return nil, internal("list indexes", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// sqlIndexName is the SQLite object of a scalar or full-text index.
func sqlIndexName(t *tableRow, r *indexRow) string {
	return fmt.Sprintf("%s_i%d", dataTable(t), r.rowID)
}

// checkIndexColumn checks that field f can have an index of type typ.
// Returns InvalidInput (13) otherwise.
func checkIndexColumn(spec store.IndexSpec, f arrow.Field) error {
	switch {
	case store.IsVectorIndex(spec.Type):
		if !store.IsVectorType(f.Type) {
			return store.Errorf(store.CodeInvalidInput, "a %s index needs a vector column, and %s is %s", spec.Type, spec.Column, f.Type)
		}
	case spec.Type == store.IndexInverted:
		if id := f.Type.ID(); id != arrow.STRING && id != arrow.LARGE_STRING {
			return store.Errorf(store.CodeInvalidInput, "a full-text index needs a string column, and %s is %s", spec.Column, f.Type)
		}
	case spec.Type == store.IndexLabelList:
		if _, ok := f.Type.(arrow.ListLikeType); !ok || store.IsVectorType(f.Type) {
			return store.Errorf(store.CodeInvalidInput, "a LABEL_LIST index needs a list column, and %s is %s", spec.Column, f.Type)
		}
	default:
		if _, nested := f.Type.(arrow.NestedType); nested || store.IsVectorType(f.Type) {
			return store.Errorf(store.CodeInvalidInput, "a %s index needs a scalar column, and %s is %s", spec.Type, spec.Column, f.Type)
		}
	}
	return nil
}

// CreateIndex implements store.Indexes. Scalar and full-text indexes are
// built here, in the request's transaction; vector indexes are queued.
func (db *DB) CreateIndex(ctx context.Context, id []string, spec store.IndexSpec) (string, error) {
	if spec.Name == "" {
		spec.Name = spec.Column + "_idx"
	}
	if err := store.ValidateName("index", spec.Name); err != nil {
		return "", err
	}
	var metric vecindex.Metric
	if store.IsVectorIndex(spec.Type) {
		m := spec.Metric
		if m == "" {
			m = "l2"
		}
		var err error
		if metric, err = vecindex.ParseMetric(m); err != nil {
			return "", store.Errorf(store.CodeInvalidInput, "unknown distance_type %q", spec.Metric)
		}
		spec.Metric = metric.String()
	}
	var txID string
	var replaced *cacheIndex
	err := db.write(ctx, func(tx *Tx) error {
		replaced = nil
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		v, ts, err := schemaAt(ctx, tx, t, nil)
		if err != nil {
			return err
		}
		path := splitPath(spec.Column)
		f, fl, ok := ts.lookup(path)
		if !ok || len(fl.Children) > 0 {
			return store.Errorf(store.CodeTableColumnNotFound, "column %s not found", spec.Column)
		}
		if err := checkIndexColumn(spec, f); err != nil {
			return err
		}
		if metric == vecindex.Hamming && (spec.Type != store.IndexIVFFlat || f.Type.(*arrow.FixedSizeListType).Elem().ID() != arrow.UINT8) {
			return store.Errorf(store.CodeInvalidInput, "hamming distance needs an IVF_FLAT index on a uint8 vector column")
		}
		if old, err := findIndex(ctx, tx, t, spec.Name); err == nil {
			// A failed build leaves nothing behind in Lance; here it
			// leaves a record saying why, which a new index replaces.
			if !spec.Replace && old.status != store.IndexFailed {
				return store.Errorf(store.CodeTableIndexAlreadyExists, "index %q of table %s already exists", spec.Name, displayID(id))
			}
			if err := dropIndexRow(ctx, tx, t, old); err != nil {
				return err
			}
			replaced = &cacheIndex{table: t.UUID, index: old.uuid}
		} else if !errors.Is(err, store.ErrTableIndexNotFound) {
			return err
		}
		params, err := json.Marshal(indexParams{Vector: spec.Vector, Text: spec.Text})
		if err != nil {
			return internal("encode index params", err)
		}
		uuid := newUUID()
		res, err := tx.ExecCached(ctx, `INSERT INTO table_indexes (table_id, name, uuid, index_type, column_path, physical, metric, params,
			status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.rowID, spec.Name, uuid, spec.Type, formatPath(path), fl.Column,
			spec.Metric, string(params), store.IndexBuilding, tx.Now().UnixMilli())
		if err != nil {
			return internal("create index", err)
		}
		r := &indexRow{name: spec.Name, uuid: uuid, indexType: spec.Type, physical: fl.Column, params: indexParams{Text: spec.Text}}
		if r.rowID, err = res.LastInsertId(); err != nil {
			return internal("create index", err)
		}
		props := map[string]string{"index": spec.Name, "index_type": spec.Type, "column": spec.Column}
		if store.IsVectorIndex(spec.Type) {
			txID, err = recordTx(ctx, tx, store.JobBuildIndex, &t.Table, store.TxQueued, props, store.BuildIndex{TableUUID: t.UUID, IndexUUID: uuid})
			return err
		}
		if err := buildSQLIndex(ctx, tx, t, r); err != nil {
			return err
		}
		if _, err := tx.ExecCached(ctx, `UPDATE table_indexes SET status = ?, built_version = ? WHERE id = ?`, store.IndexSucceeded, v, r.rowID); err != nil {
			return internal("create index", err)
		}
		txID, err = recordTx(ctx, tx, "CreateTableIndex", &t.Table, store.TxSucceeded, props, nil)
		return err
	})
	if err == nil && replaced != nil {
		db.forgetIndex(*replaced)
	}
	return txID, err
}

// buildSQLIndex creates the SQLite object behind a scalar or full-text
// index.
func buildSQLIndex(ctx context.Context, tx *Tx, t *tableRow, r *indexRow) error {
	var stmts []string
	name, col := sqlIndexName(t, r), quoteColumn(r.physical)
	switch r.indexType {
	case store.IndexBTree, store.IndexBitmap:
		stmts = []string{fmt.Sprintf(`CREATE INDEX %s ON %s (%s)`, name, dataTable(t), col)}
	case store.IndexLabelList:
		stmts = []string{
			fmt.Sprintf(`CREATE TABLE %s (value, row INTEGER NOT NULL)`, name),
			fmt.Sprintf(`CREATE INDEX %s_value ON %s (value, row)`, name, name),
			fmt.Sprintf(`INSERT INTO %s (value, row) SELECT j.value, r._rowid FROM %s r, json_each(r.%s) j WHERE r.%s IS NOT NULL`, name, dataTable(t), col, col),
			fmt.Sprintf(`CREATE TRIGGER %s_add AFTER INSERT ON %s WHEN new.%s IS NOT NULL BEGIN
				INSERT INTO %s (value, row) SELECT value, new._rowid FROM json_each(new.%s); END`, name, dataTable(t), col, name, col),
		}
	case store.IndexInverted:
		return buildTextIndex(ctx, tx, t, r)
	default:
		return store.Errorf(store.CodeInvalidInput, "unknown index type %s", r.indexType)
	}
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q); err != nil {
			return internal("build index", err)
		}
	}
	return nil
}

// dropIndexRow removes an index and its SQLite objects.
func dropIndexRow(ctx context.Context, tx *Tx, t *tableRow, r *indexRow) error {
	if err := dropSQLIndex(ctx, tx, t, r); err != nil {
		return err
	}
	if _, err := tx.ExecCached(ctx, `DELETE FROM table_indexes WHERE id = ?`, r.rowID); err != nil {
		return internal("drop index", err)
	}
	return nil
}

// dropSQLIndex drops the SQLite objects of a scalar or full-text index.
func dropSQLIndex(ctx context.Context, tx *Tx, t *tableRow, r *indexRow) error {
	name := sqlIndexName(t, r)
	var stmts []string
	switch r.indexType {
	case store.IndexBTree, store.IndexBitmap:
		stmts = []string{`DROP INDEX IF EXISTS ` + name}
	case store.IndexLabelList:
		stmts = []string{`DROP TRIGGER IF EXISTS ` + name + `_add`, `DROP TABLE IF EXISTS ` + name}
	case store.IndexInverted:
		stmts = []string{`DROP TRIGGER IF EXISTS ` + name + `_add`, `DROP TABLE IF EXISTS ` + name}
	}
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q); err != nil {
			return internal("drop index", err)
		}
	}
	return nil
}

// dropAllIndexes drops the SQLite objects of every index of t, before the
// table itself goes.
func dropAllIndexes(ctx context.Context, tx *Tx, t *tableRow) error {
	rows, err := listIndexRows(ctx, tx, t)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := dropSQLIndex(ctx, tx, t, r); err != nil {
			return err
		}
	}
	return nil
}

// BuildIndex implements store.Indexes: it reads the vectors in a read
// transaction, trains without holding any, and records the built index in a
// short write. It records nothing when it fails: the job's end does
// (FinishJob marks the index FAILED, ReleaseJob queues the build again).
func (db *DB) BuildIndex(ctx context.Context, job store.BuildIndex) error {
	var set *vectorSet
	var r *indexRow
	var version int64
	err := db.read(ctx, func(tx *Tx) error {
		id, err := tableIDByUUID(ctx, tx, job.TableUUID)
		if err != nil {
			return err
		}
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		if r, err = indexByUUID(ctx, tx, t, job.IndexUUID); err != nil || r.status == store.IndexSucceeded {
			return err // a job run again after a crash may find its work done
		}
		if version, err = latestManaged(ctx, tx, t); err != nil {
			return err
		}
		ts, err := loadSchema(ctx, tx, t, version)
		if err != nil {
			return err
		}
		f, fl, ok := ts.lookup(splitPath(r.columnPath))
		if !ok || fl.Column != r.physical {
			return store.Errorf(store.CodeTableColumnNotFound, "column %s of index %s no longer exists", r.columnPath, r.name)
		}
		set, err = loadVectors(ctx, tx, t, f, fl.Column, version)
		return err
	})
	if err != nil || set == nil {
		return err
	}
	ix, err := buildVectorIndex(ctx, r, set)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return store.Errorf(store.CodeInvalidInput, "building index %s: %v", r.name, err)
	}
	data, err := ix.MarshalBinary()
	if err != nil {
		return internal("save index", err)
	}
	var maxID int64 = -1
	if ids := set.ids(); len(ids) > 0 {
		maxID = ids[len(ids)-1]
	}
	return db.write(ctx, func(tx *Tx) error {
		res, err := tx.ExecCached(ctx, `UPDATE table_indexes SET status = ?, error = NULL, built_version = ?, max_rowid = ?, data = ?
			WHERE uuid = ?`, store.IndexSucceeded, version, maxID, data, job.IndexUUID)
		if err != nil {
			return internal("save index", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.Errorf(store.CodeTableIndexNotFound, "index %s was dropped or replaced while it was built", r.name)
		}
		return nil
	})
}

// rebuildVectorIndexes queues a new build of each vector index of t that
// is built or being built, in a write that replaced every row of the
// table (restore, overwrite): an index covers rows by row id, and the new
// version shows none of the rows it was built on, so keeping it would
// report a SUCCEEDED index covering nothing. Each index gets a new uuid, so
// that a build still running on the old rows records nothing (that job
// fails, saying the index was replaced); until the new build ends the
// index is BUILDING and searches scan exactly. Failed indexes stay as they
// are.
func rebuildVectorIndexes(ctx context.Context, tx *Tx, t *tableRow) error {
	rows, err := listIndexRows(ctx, tx, t)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if !store.IsVectorIndex(r.indexType) || r.status == store.IndexFailed {
			continue
		}
		uuid := newUUID()
		if _, err := tx.ExecCached(ctx, `UPDATE table_indexes SET uuid = ?, status = ?, error = NULL, built_version = NULL,
			max_rowid = NULL, data = NULL WHERE id = ?`, uuid, store.IndexBuilding, r.rowID); err != nil {
			return internal("rebuild index", err)
		}
		props := map[string]string{"index": r.name, "index_type": r.indexType, "column": r.columnPath}
		if _, err := recordTx(ctx, tx, store.JobBuildIndex, &t.Table, store.TxQueued, props, store.BuildIndex{TableUUID: t.UUID, IndexUUID: uuid}); err != nil {
			return err
		}
		old := cacheIndex{table: t.UUID, index: r.uuid}
		tx.OnCommit(func() { tx.db.forgetIndex(old) })
	}
	return nil
}

func buildVectorIndex(ctx context.Context, r *indexRow, set *vectorSet) (*vecindex.Index, error) {
	kind, err := vecindex.ParseKind(r.indexType)
	if err != nil {
		return nil, err
	}
	metric, err := vecindex.ParseMetric(r.metric)
	if err != nil {
		return nil, err
	}
	vp := r.params.Vector
	p := vecindex.Params{Kind: kind, Metric: metric, NumPartitions: vp.NumPartitions, TargetPartitionSize: vp.TargetPartitionSize,
		NumSubVectors: vp.NumSubVectors, NumBits: vp.NumBits, SampleRate: vp.SampleRate, MaxIterations: vp.MaxIterations,
		M: vp.M, EfConstruction: vp.EfConstruction, Seed: 1}
	if len(set.ids()) == 0 {
		return nil, errors.New("the column has no vectors to index")
	}
	if metric == vecindex.Hamming {
		return vecindex.BuildBytes(ctx, p, set.bytes)
	}
	return vecindex.Build(ctx, p, set.f32)
}

func indexByUUID(ctx context.Context, tx *Tx, t *tableRow, uuid string) (*indexRow, error) {
	r, err := scanIndex(tx.QueryRowCached(ctx, `SELECT `+indexColumns+` FROM table_indexes WHERE table_id = ? AND uuid = ?`, t.rowID, uuid))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.Errorf(store.CodeTableIndexNotFound, "index %s no longer exists", uuid)
	}
	if err != nil {
		return nil, internal("find index", err)
	}
	return r, nil
}

// vectorIndex is a loaded vector index and the rows it covers.
type vectorIndex struct {
	ix       *vecindex.Index
	maxRowID int64
}

func (vi *vectorIndex) cacheBytes() int64 { return vi.ix.MemoryBytes() + 16 }

// cacheIndex names an index of a table for the memory cache.
type cacheIndex struct {
	table, index string // uuids
}

// vectorKey and postingsKey are the cache keys of index ci's in-memory
// forms.
func (ci cacheIndex) vectorKey() cacheKey {
	return cacheKey{table: ci.table, name: "index/" + ci.index, version: noVersion}
}

func (ci cacheIndex) postingsKey() cacheKey {
	return cacheKey{table: ci.table, name: "postings/" + ci.index, version: noVersion}
}

// forgetIndex releases the cached forms of a dropped or replaced index.
func (db *DB) forgetIndex(ci cacheIndex) {
	db.cache.forget(ci.vectorKey())
	db.cache.forget(ci.postingsKey())
}

// usableIndex returns the built vector index on physical column col that
// a search of version v may use, if any and the search does not bypass it:
// one built on version v or an earlier one. An index built later does not
// exist at v (as in Lance, where an index belongs to the versions from its
// build on), and would miss the rows v shows that were gone by its build.
func (db *DB) usableIndex(ctx context.Context, tx *Tx, t *tableRow, col string, v int64, vs *store.VectorSearch) (*vectorIndex, error) {
	if vs.BypassIndex {
		return nil, nil
	}
	var uuid string
	var maxID int64
	err := tx.QueryRowCached(ctx, `SELECT uuid, max_rowid FROM table_indexes WHERE table_id = ? AND physical = ? AND status = ?
		AND index_type LIKE 'IVF%' AND built_version <= ? ORDER BY created_at DESC LIMIT 1`, t.rowID, col, store.IndexSucceeded, v).Scan(&uuid, &maxID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("find index", err)
	}
	return db.loadVectorIndex(ctx, tx, t, uuid, maxID)
}

// loadVectorIndex returns the built vector index uuid of table t, which
// covers the rows up to maxID, from the memory cache or loaded into it.
func (db *DB) loadVectorIndex(ctx context.Context, tx *Tx, t *tableRow, uuid string, maxID int64) (*vectorIndex, error) {
	val, err := db.cache.get(ctx, cacheIndex{table: t.UUID, index: uuid}.vectorKey(), func() (cached, error) {
		var data []byte
		if err := tx.QueryRowCached(ctx, `SELECT data FROM table_indexes WHERE uuid = ?`, uuid).Scan(&data); err != nil {
			return nil, internal("load index", err)
		}
		ix, err := vecindex.Load(data)
		if err != nil {
			return nil, internal("load index", err)
		}
		return &vectorIndex{ix: ix, maxRowID: maxID}, nil
	})
	if err != nil {
		return nil, err
	}
	return val.(*vectorIndex), nil
}

// ListIndices implements store.Indexes.
func (db *DB) ListIndices(ctx context.Context, id []string, version *int64, page store.Page) ([]store.IndexInfo, string, error) {
	after, err := store.DecodePageToken(page.Token)
	if err != nil {
		return nil, "", err
	}
	size := store.PageSize(page.Limit)
	var out []store.IndexInfo
	err = db.read(ctx, func(tx *Tx) error {
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		v, err := resolveVersion(ctx, tx, t, version)
		if err != nil {
			return err
		}
		latest, err := latestManaged(ctx, tx, t)
		if err != nil {
			return err
		}
		rows, err := listIndexRows(ctx, tx, t)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if r.name <= after || !r.existsAt(v, latest) {
				continue
			}
			info, err := indexInfo(ctx, tx, t, r, v)
			if err != nil {
				return err
			}
			out = append(out, *info)
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	out, next := store.CutPage(out, size, func(x store.IndexInfo) string { return x.Name })
	return out, next, nil
}

// existsAt reports whether index r exists at version v of its table, whose
// latest version is latest. As in Lance, an index belongs to the versions
// from the one it was built on: reading an older version finds none. An
// index not built yet (building or failed) shows at the latest version
// only.
func (r *indexRow) existsAt(v, latest int64) bool {
	if r.builtVersion.Valid {
		return r.builtVersion.Int64 <= v
	}
	return v == latest
}

// indexInfo describes index r at version v, one it exists at (existsAt): a
// vector index covers the rows of the version it was built on that v
// still shows (rows up to its max row id: later ones are searched
// exactly); scalar and full-text indexes, kept by SQLite as rows are
// written, cover every row.
func indexInfo(ctx context.Context, tx *Tx, t *tableRow, r *indexRow, v int64) (*store.IndexInfo, error) {
	info := &store.IndexInfo{Name: r.name, UUID: r.uuid, Columns: []string{r.columnPath}, Type: r.indexType, Status: r.status,
		Metric: r.metric, SizeBytes: r.size, CreatedAt: r.createdAt}
	b, _ := json.Marshal(store.IndexDetails(r.indexType, r.metric, r.params.Vector, r.params.Text, r.errText))
	info.Details = string(b)
	if !store.IsVectorIndex(r.indexType) {
		size, err := sqlIndexSize(ctx, tx, t, r)
		if err != nil {
			return nil, err
		}
		info.SizeBytes = size
	}
	covered := int64(allRows)
	if store.IsVectorIndex(r.indexType) {
		covered = -1
		if r.status == store.IndexSucceeded && r.maxRowID.Valid {
			covered = r.maxRowID.Int64
		}
	}
	q := fmt.Sprintf(`SELECT count(*) FILTER (WHERE _rowid <= ?3), count(*) FILTER (WHERE _rowid > ?3) FROM %s
		WHERE _from <= ?1 AND _to > ?2 AND %s IS NOT NULL`, dataTable(t), quoteColumn(r.physical))
	if err := tx.QueryRow(ctx, q, v, v, covered).Scan(&info.NumIndexedRows, &info.NumUnindexedRows); err != nil {
		return nil, internal("index stats", err)
	}
	return info, nil
}

// sqlIndexSize returns the bytes the SQLite objects of a scalar or
// full-text index take in the database file (its B-tree pages, counted by
// SQLite's dbstat table).
func sqlIndexSize(ctx context.Context, tx *Tx, t *tableRow, r *indexRow) (int64, error) {
	name := sqlIndexName(t, r)
	var size int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN (?, ?)`, name, name+"_value").Scan(&size); err != nil {
		return 0, internal("index size", err)
	}
	return size, nil
}

// allRows is the largest row id: scalar and full-text indexes cover them
// all.
const allRows = 1<<63 - 1

// DescribeIndex implements store.Indexes.
func (db *DB) DescribeIndex(ctx context.Context, id []string, name string, version *int64) (*store.IndexInfo, error) {
	var out *store.IndexInfo
	err := db.read(ctx, func(tx *Tx) error {
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		v, err := resolveVersion(ctx, tx, t, version)
		if err != nil {
			return err
		}
		latest, err := latestManaged(ctx, tx, t)
		if err != nil {
			return err
		}
		r, err := findIndex(ctx, tx, t, name)
		if err != nil {
			return err
		}
		if !r.existsAt(v, latest) {
			return store.Errorf(store.CodeTableIndexNotFound, "index %q of table %s does not exist at version %d: it was built on a later one",
				name, displayID(t.ID), v)
		}
		out, err = indexInfo(ctx, tx, t, r, v)
		return err
	})
	return out, err
}

// DropIndex implements store.Indexes.
func (db *DB) DropIndex(ctx context.Context, id []string, name string) (string, error) {
	var txID string
	var dropped cacheIndex
	err := db.write(ctx, func(tx *Tx) error {
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		r, err := findIndex(ctx, tx, t, name)
		if err != nil {
			return err
		}
		dropped = cacheIndex{table: t.UUID, index: r.uuid}
		if err := dropIndexRow(ctx, tx, t, r); err != nil {
			return err
		}
		txID, err = recordTx(ctx, tx, "DropTableIndex", &t.Table, store.TxSucceeded, map[string]string{"index": name}, nil)
		return err
	})
	if err == nil {
		db.forgetIndex(dropped)
	}
	return txID, err
}

// numIndices counts the indexes of table t.
func numIndices(ctx context.Context, tx *Tx, t *tableRow) (int64, error) {
	var n int64
	err := tx.QueryRowCached(ctx, `SELECT count(*) FROM table_indexes WHERE table_id = ?`, t.rowID).Scan(&n)
	if err != nil {
		return 0, internal("count indexes", err)
	}
	return n, nil
}
