package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/schema"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/vecindex"
)

// Indexes (see doc.go): an index is a file beside the data, under
// indexDir, made by one build over the fragments of one version of main;
// its record (store.DatasetIndexes) holds what it was asked for
// (indexDef) and what its last build made (indexBuild). The fragments a
// build covers are named by id and by the data file that holds the
// indexed column, so that a fragment whose column was rewritten, or an
// id Lance reused after an overwrite, is not taken for the one indexed.
// A build indexes every physical row of the fragments it covers, deleted
// ones too: a search leaves out the rows the version it reads has
// deleted, so the index serves every version that has those fragments,
// older ones (after a restore) as well as newer ones.

// indexDir is the directory, below a table's root, of the files of index
// uuid. Lance's cleanup and compaction leave alone what is not theirs
// (data/, _deletions/, _indices/, _transactions/, _versions/).
func indexDir(uuid string) string { return "_lancens/indices/" + uuid + "/" }

// indexDef is the Definition of an index record.
type indexDef struct {
	// Column is the path of the column as the index was asked for, and
	// FieldID the Lance id of its field: a column dropped and added again
	// under the name is another field.
	Column  string                  `json:"column"`
	FieldID int32                   `json:"field_id"`
	Metric  string                  `json:"metric,omitempty"`
	Vector  store.VectorIndexParams `json:"vector,omitzero"`
	Text    store.TextIndexParams   `json:"text,omitzero"`
}

// indexBuild is the Build of an index record.
type indexBuild struct {
	// ID names the build's file: indexDir(uuid) + ID + the kind's
	// extension.
	ID string `json:"id"`
	// Version is the version of main the build read.
	Version   uint64         `json:"version"`
	Fragments []coveredFrag  `json:"fragments"`
	File      string         `json:"file"`
	Size      int64          `json:"size"`
	Stats     map[string]any `json:"stats,omitempty"`
}

// coveredFrag is a fragment a build covers.
type coveredFrag struct {
	ID uint64 `json:"id"`
	// File names the data file that held the indexed column (reader's
	// fileKey); "" when none did (the column was all nulls).
	File string `json:"file"`
	// Rows is the fragment's physical rows.
	Rows uint64 `json:"rows"`
}

// indexRecord is a record as the engine reads it.
type indexRecord struct {
	store.DatasetIndex
	def   indexDef
	build *indexBuild // nil until built
}

// readRecord decodes the engine's parts of record ix. It returns an
// internal error for JSON the engine did not write.
func readRecord(ix store.DatasetIndex) (*indexRecord, error) {
	r := &indexRecord{DatasetIndex: ix}
	if err := json.Unmarshal([]byte(ix.Definition), &r.def); err != nil {
		return nil, fmt.Errorf("index %s: definition: %w", ix.Name, err)
	}
	if ix.Build != "" {
		r.build = &indexBuild{}
		if err := json.Unmarshal([]byte(ix.Build), r.build); err != nil {
			return nil, fmt.Errorf("index %s: build: %w", ix.Name, err)
		}
	}
	return r, nil
}

// records returns the index records of table r.
func (e *Engine) records(ctx context.Context, r *tableRef) ([]*indexRecord, error) {
	list, err := e.cat.ListDatasetIndexes(ctx, r.id)
	if err != nil {
		return nil, err
	}
	out := make([]*indexRecord, 0, len(list))
	for _, ix := range list {
		rec, err := readRecord(ix)
		if err != nil {
			return nil, &store.Error{Code: store.CodeInternal, Message: "an index record cannot be read", Cause: err}
		}
		out = append(out, rec)
	}
	return out, nil
}

// indexRecords returns the index records of rd's table, read once per
// reader.
func (rd *reader) indexRecords(ctx context.Context) ([]*indexRecord, error) {
	if rd.recs == nil {
		recs, err := rd.e.records(ctx, rd.ref)
		if err != nil {
			return nil, err
		}
		rd.recs = recs
	}
	return rd.recs, nil
}

// numIndices counts the indexes of rd's snapshot by name: lancens's that
// exist at its version, and those its manifest lists (built by Lance).
func (rd *reader) numIndices(ctx context.Context) (int64, error) {
	names := map[string]bool{}
	for _, ix := range rd.s.ds.Manifest().Indexes {
		names[ix.Name] = true
	}
	if rd.ref.branch == "" {
		recs, err := rd.indexRecords(ctx)
		if err != nil {
			return 0, err
		}
		for _, ix := range recs {
			if ix.BuiltVersion == nil || uint64(*ix.BuiltVersion) <= rd.s.ds.Version() {
				names[ix.Name] = true
			}
		}
	}
	return int64(len(names)), nil
}

// existsAt reports whether the index exists at version v of main, whose
// latest version is latest: as in Lance, from the version it was first
// built on; an index not built yet shows at the latest version only.
func (ix *indexRecord) existsAt(v, latest uint64) bool {
	if ix.BuiltVersion != nil {
		return uint64(*ix.BuiltVersion) <= v
	}
	return v == latest
}

// usable reports whether searches may use the index's last build.
func (ix *indexRecord) usable() bool { return ix.build != nil && ix.Status != store.IndexFailed }

// servesAt reports whether searches of version v of main may use the
// index's last build: it is usable and exists at v.
func (ix *indexRecord) servesAt(v uint64) bool {
	return ix.usable() && ix.BuiltVersion != nil && uint64(*ix.BuiltVersion) <= v
}

// indexColumn is the column of an index as one snapshot has it.
type indexColumn struct {
	top   int   // the index of its top-level field
	path  []int // child indices below it
	field arrow.Field
	lance *schema.Field // its Lance field
	name  string        // its path
}

// columnByPath resolves the column at path p in snapshot s.
func columnByPath(s *snapshot, p string) (indexColumn, bool) {
	c, ok := lookupColumn(s.arrow, p)
	if !ok {
		return indexColumn{}, false
	}
	lf := s.ds.Manifest().Schema.Fields[c.top]
	names := []string{lf.Name}
	for _, j := range c.path {
		lf = lf.Children[j]
		names = append(names, lf.Name)
	}
	return indexColumn{top: c.top, path: c.path, field: c.field, lance: lf, name: schema.FormatPath(names...)}, true
}

// columnByID resolves the column whose Lance field id is id in snapshot s
// (through structs), wherever renames have put it.
func columnByID(s *snapshot, id int32) (indexColumn, bool) {
	var walk func(f *schema.Field, names []string, path []int) (indexColumn, bool)
	walk = func(f *schema.Field, names []string, path []int) (indexColumn, bool) {
		names = append(names, f.Name)
		if f.ID == id {
			return columnByPath(s, schema.FormatPath(names...))
		}
		if !f.IsStruct() {
			return indexColumn{}, false
		}
		for j, c := range f.Children {
			if out, ok := walk(c, names, append(slices.Clone(path), j)); ok {
				return out, true
			}
		}
		return indexColumn{}, false
	}
	for _, f := range s.ds.Manifest().Schema.Fields {
		if out, ok := walk(f, nil, nil); ok {
			return out, true
		}
	}
	return indexColumn{}, false
}

// coverage is which fragments of a snapshot an index's build covers.
type coverage struct {
	// covered maps the id of each covered fragment of the snapshot to
	// its position in the build's fragments.
	covered map[uint64]int
}

// coverageOf returns which fragments of rd's snapshot the build b of an
// index on column col covers: those the build read, with the same data
// file holding the column.
func (rd *reader) coverageOf(b *indexBuild, col indexColumn) (coverage, error) {
	cov := coverage{covered: map[uint64]int{}}
	if b == nil {
		return cov, nil
	}
	byID := make(map[uint64]int, len(b.Fragments))
	for i, f := range b.Fragments {
		byID[f.ID] = i
	}
	lf := rd.s.ds.Manifest().Schema.Fields[col.top]
	for _, frag := range rd.s.ds.Manifest().Fragments {
		i, ok := byID[frag.ID]
		if !ok || b.Fragments[i].Rows != frag.PhysicalRows {
			continue
		}
		key, err := rd.columnFile(frag, lf)
		if err != nil {
			return cov, err
		}
		if key == b.Fragments[i].File {
			cov.covered[frag.ID] = i
		}
	}
	return cov, nil
}

// columnFile names the data file of frag that holds top-level field lf
// (reader.fileKey), or "" when none does.
func (rd *reader) columnFile(frag *table.Fragment, lf *schema.Field) (string, error) {
	df, err := frag.FileHolding(lf)
	if err != nil || df == nil {
		return "", err
	}
	return rd.fileKey(df), nil
}

// rowsOf returns the live rows of the fragments of rd's snapshot that cov
// covers and of those it does not.
func (rd *reader) rowsOf(cov coverage) (indexed, unindexed int64) {
	for _, frag := range rd.s.ds.Manifest().Fragments {
		n := int64(frag.PhysicalRows)
		if frag.Deletion != nil {
			n -= int64(frag.Deletion.NumDeleted)
		}
		if _, ok := cov.covered[frag.ID]; ok {
			indexed += n
		} else {
			unindexed += n
		}
	}
	return indexed, unindexed
}

// CreateIndex implements store.Indexes. A vector index is recorded as
// BUILDING and built by a queued job; a scalar or full-text index is built
// here, on the latest version, before its record commits. Indexes belong
// to main, whatever the branch. It returns TableNotFound (4),
// TableColumnNotFound (12), TableIndexAlreadyExists (7), InvalidInput (13)
// for a column of the wrong type or bad parameters, and the errors of
// reading the table.
func (e *Engine) CreateIndex(ctx context.Context, id []string, spec store.IndexSpec) (string, error) {
	main := &Engine{shared: e.shared}
	if spec.Name == "" {
		spec.Name = spec.Column + "_idx"
	}
	if err := store.ValidateName("index", spec.Name); err != nil {
		return "", err
	}
	r, err := main.findData(ctx, id)
	if err != nil {
		return "", err
	}
	s, err := main.open(ctx, r, nil)
	if err != nil {
		return "", err
	}
	col, ok := columnByPath(s, spec.Column)
	if !ok || len(col.lance.Children) > 0 && !col.lance.IsList() {
		return "", store.Errorf(store.CodeTableColumnNotFound, "column %s not found", spec.Column)
	}
	def := indexDef{Column: col.name, FieldID: col.lance.ID, Vector: spec.Vector, Text: spec.Text}
	if err := checkIndexColumn(spec, col); err != nil {
		return "", err
	}
	if store.IsVectorIndex(spec.Type) {
		m := spec.Metric
		if m == "" {
			m = "l2"
		}
		metric, err := vecindex.ParseMetric(m)
		if err != nil {
			return "", store.Errorf(store.CodeInvalidInput, "unknown distance_type %q", spec.Metric)
		}
		if metric == vecindex.Hamming && (spec.Type != store.IndexIVFFlat || col.field.Type.(*arrow.FixedSizeListType).Elem().ID() != arrow.UINT8) {
			return "", store.Errorf(store.CodeInvalidInput, "hamming distance needs an IVF_FLAT index on a uint8 vector column")
		}
		def.Metric = metric.String()
	}
	defJSON, err := json.Marshal(def)
	if err != nil {
		return "", err
	}
	rec := store.DatasetIndex{UUID: newIndexUUID(), Name: spec.Name, Type: spec.Type, Status: store.IndexBuilding, Definition: string(defJSON)}
	props := map[string]string{"index": spec.Name, "index_type": spec.Type, "column": spec.Column}
	var built *indexBuild
	if !store.IsVectorIndex(spec.Type) {
		ir := &indexRecord{DatasetIndex: rec, def: def}
		if built, err = main.build(ctx, r, s, ir); err != nil {
			return "", err
		}
		b, err := json.Marshal(built)
		if err != nil {
			return "", err
		}
		v := int64(s.ds.Version())
		rec.Status, rec.BuiltVersion, rec.Build = store.IndexSucceeded, &v, string(b)
	}
	txID, replaced, err := e.cat.CreateDatasetIndex(ctx, r.id, rec, spec.Replace, props)
	if err != nil {
		if built != nil {
			main.removeIndexFiles(r, rec.UUID)
		}
		return "", err
	}
	if replaced != nil {
		main.removeIndexFiles(r, replaced.UUID)
	}
	return txID, nil
}

// newIndexUUID returns a random (version 4) UUID for an index.
func newIndexUUID() string {
	b := randomBytes(16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// checkIndexColumn checks that column col can have the index spec asks
// for. Returns InvalidInput (13) otherwise.
func checkIndexColumn(spec store.IndexSpec, col indexColumn) error {
	f := col.field
	switch {
	case store.IsVectorIndex(spec.Type):
		if !store.IsVectorType(f.Type) {
			return store.Errorf(store.CodeInvalidInput, "a %s index needs a vector column, and %s is %s", spec.Type, spec.Column, f.Type)
		}
		if len(col.path) > 0 {
			return store.Errorf(store.CodeInvalidInput, "a %s index needs a top-level vector column; %s is inside a struct", spec.Type, spec.Column)
		}
	case spec.Type == store.IndexInverted:
		if id := f.Type.ID(); id != arrow.STRING && id != arrow.LARGE_STRING {
			return store.Errorf(store.CodeInvalidInput, "a full-text index needs a string column, and %s is %s", spec.Column, f.Type)
		}
	case spec.Type == store.IndexLabelList:
		lt, ok := f.Type.(arrow.ListLikeType)
		if !ok || store.IsVectorType(f.Type) {
			return store.Errorf(store.CodeInvalidInput, "a LABEL_LIST index needs a list column, and %s is %s", spec.Column, f.Type)
		}
		if _, nested := lt.Elem().(arrow.NestedType); nested {
			return store.Errorf(store.CodeInvalidInput, "a LABEL_LIST index needs a list of scalars, and %s is %s", spec.Column, f.Type)
		}
	default:
		if _, nested := f.Type.(arrow.NestedType); nested || store.IsVectorType(f.Type) {
			return store.Errorf(store.CodeInvalidInput, "a %s index needs a scalar column, and %s is %s", spec.Type, spec.Column, f.Type)
		}
	}
	return nil
}

// BuildIndex implements store.Indexes: it builds the index a job names on
// the latest version of main, writes its file and records it. A job run
// again after its work was recorded does nothing. It returns
// TableIndexNotFound (6) when the index was dropped or replaced, ctx's
// error, InvalidInput (13) when the parameters do not fit the data, and
// the errors of reading the table; it records nothing when it fails (the
// job's end marks the index FAILED, see store.Jobs).
func (e *Engine) BuildIndex(ctx context.Context, job store.BuildIndex) error {
	main := &Engine{shared: e.shared}
	id, ix, err := e.cat.FindDatasetIndex(ctx, job.IndexUUID)
	if err != nil {
		return err
	}
	if ix.Status == store.IndexSucceeded {
		return nil
	}
	rec, err := readRecord(*ix)
	if err != nil {
		return &store.Error{Code: store.CodeInternal, Message: "an index record cannot be read", Cause: err}
	}
	r, err := main.findData(ctx, id)
	if err != nil {
		return err
	}
	s, built, err := main.buildLatest(ctx, r, rec)
	if err != nil {
		return err
	}
	b, err := json.Marshal(built)
	if err != nil {
		return err
	}
	if err := e.cat.FinishDatasetIndex(ctx, job.IndexUUID, int64(s.ds.Version()), string(b)); err != nil {
		main.removeBuildFile(r, built)
		return err
	}
	if rec.build != nil {
		// A rebuild: searches that read the old record may still be
		// loading its file, and go exact if it is gone (see loadIndex).
		main.removeBuildFile(r, rec.build)
	}
	return nil
}

// buildAttempts bounds how many versions buildLatest tries.
const buildAttempts = 3

// beforeBuild, when set (by tests), runs between reading the version an
// index is built from and building it.
var beforeBuild func()

// buildLatest builds index ix from the latest version of table r and
// returns that version's snapshot and the build. When files of the
// version go while it reads them (a cleanup removed the version, after an
// optimize committed a newer one) it starts again from the new latest
// version, up to buildAttempts versions. It returns the errors of open
// and build.
func (e *Engine) buildLatest(ctx context.Context, r *tableRef, ix *indexRecord) (*snapshot, *indexBuild, error) {
	for attempt := 1; ; attempt++ {
		s, err := e.open(ctx, r, nil)
		if err != nil {
			return nil, nil, err
		}
		if beforeBuild != nil {
			beforeBuild()
		}
		built, err := e.build(ctx, r, s, ix)
		if err == nil || attempt == buildAttempts || !errors.Is(err, blob.ErrNotFound) {
			return s, built, err
		}
		if v, _, lerr := e.latestRecord(ctx, r); lerr != nil || v == s.ds.Version() {
			return s, built, err
		}
		e.log.Info("an index build's version was cleaned up while it read it: building from the latest version",
			slog.String("table", displayID(r.id)), slog.String("index", ix.Name), slog.Uint64("version", s.ds.Version()))
	}
}

// ListIndices implements store.Indexes: the indexes of the table that
// exist at the version (nil: the latest), by name; none on a branch, as
// indexes belong to main. It returns TableNotFound (4),
// TableVersionNotFound (11).
func (e *Engine) ListIndices(ctx context.Context, id []string, version *int64, page store.Page) ([]store.IndexInfo, string, error) {
	after, err := store.DecodePageToken(page.Token)
	if err != nil {
		return nil, "", err
	}
	infos, err := e.indexInfos(ctx, id, version, func(name string) bool { return name > after })
	if err != nil {
		return nil, "", err
	}
	out, next := store.CutPage(infos, store.PageSize(page.Limit), func(x store.IndexInfo) string { return x.Name })
	return out, next, nil
}

// DescribeIndex implements store.Indexes. It returns TableNotFound (4),
// TableVersionNotFound (11), TableIndexNotFound (6) for an index the
// table lacks or that does not exist at the version.
func (e *Engine) DescribeIndex(ctx context.Context, id []string, name string, version *int64) (*store.IndexInfo, error) {
	infos, err := e.indexInfos(ctx, id, version, func(n string) bool { return n == name })
	if err != nil {
		return nil, err
	}
	if len(infos) == 0 {
		return nil, store.Errorf(store.CodeTableIndexNotFound, "table %s has no index %s at this version", displayID(id), name)
	}
	return &infos[0], nil
}

// indexInfos describes the indexes of table id whose names keep accepts
// and that exist at the version, by name.
func (e *Engine) indexInfos(ctx context.Context, id []string, version *int64, keep func(string) bool) ([]store.IndexInfo, error) {
	r, err := e.find(ctx, id)
	if err != nil {
		return nil, err
	}
	if e.branch != "" || r.t.Declared {
		return []store.IndexInfo{}, nil
	}
	recs, err := e.records(ctx, r)
	if err != nil {
		return nil, err
	}
	recs = slices.DeleteFunc(recs, func(ix *indexRecord) bool { return !keep(ix.Name) })
	if len(recs) == 0 {
		if version != nil {
			if _, err := e.open(ctx, r, version); err != nil {
				return nil, err
			}
		}
		return []store.IndexInfo{}, nil
	}
	latest, err := e.latest(ctx, r)
	if err != nil {
		return nil, err
	}
	s, err := e.open(ctx, r, version)
	if err != nil {
		return nil, err
	}
	rd := e.reader(r, s)
	out := []store.IndexInfo{}
	for _, ix := range recs {
		if !ix.existsAt(s.ds.Version(), latest) {
			continue
		}
		info, err := rd.indexInfo(ix)
		if err != nil {
			return nil, dataError(id, err)
		}
		out = append(out, info)
	}
	return out, nil
}

// indexInfo describes index ix at rd's snapshot: the live rows of the
// fragments its build covers are indexed, the others not (searched
// exactly).
func (rd *reader) indexInfo(ix *indexRecord) (store.IndexInfo, error) {
	info := store.IndexInfo{Name: ix.Name, UUID: ix.UUID, Columns: []string{ix.def.Column}, Type: ix.Type, Status: ix.Status,
		Metric: ix.def.Metric, CreatedAt: ix.CreatedAt}
	if ix.build != nil {
		info.SizeBytes = ix.build.Size
	}
	d, err := json.Marshal(store.IndexDetails(ix.Type, ix.def.Metric, ix.def.Vector, ix.def.Text, ix.Error))
	if err != nil {
		return info, err
	}
	info.Details = string(d)
	col, ok := columnByID(rd.s, ix.def.FieldID)
	if !ok {
		// The column is gone: nothing of this version is indexed.
		info.NumUnindexedRows = int64(rd.s.ds.Manifest().Rows())
		return info, nil
	}
	info.Columns = []string{col.name}
	var cov coverage
	if ix.usable() {
		if cov, err = rd.coverageOf(ix.build, col); err != nil {
			return info, err
		}
	}
	info.NumIndexedRows, info.NumUnindexedRows = rd.rowsOf(cov)
	return info, nil
}

// DropIndex implements store.Indexes: the record goes, then the index's
// files. It returns TableNotFound (4), TableIndexNotFound (6).
func (e *Engine) DropIndex(ctx context.Context, id []string, name string) (string, error) {
	main := &Engine{shared: e.shared}
	r, err := main.find(ctx, id)
	if err != nil {
		return "", err
	}
	txID, dropped, err := e.cat.DropDatasetIndex(ctx, r.id, name)
	if err != nil {
		return "", err
	}
	main.removeIndexFiles(r, dropped.UUID)
	return txID, nil
}

// PrewarmIndex implements store.Indexes: it loads the index's last build
// into the cache. It returns TableNotFound (4), TableIndexNotFound (6),
// InvalidTableState (19) for an index whose build has not succeeded, and
// the errors of reading its file.
func (e *Engine) PrewarmIndex(ctx context.Context, id []string, name string) error {
	main := &Engine{shared: e.shared}
	r, err := main.find(ctx, id)
	if err != nil {
		return err
	}
	recs, err := main.records(ctx, r)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(recs, func(ix *indexRecord) bool { return ix.Name == name })
	if i < 0 {
		return store.Errorf(store.CodeTableIndexNotFound, "table %s has no index %s", displayID(id), name)
	}
	ix := recs[i]
	if !ix.usable() {
		return store.Errorf(store.CodeInvalidTableState, "index %s of table %s is %s: there is nothing built to load yet", name, displayID(id), ix.Status)
	}
	_, err = main.loadIndex(ctx, r, ix)
	return dataError(id, err)
}

// removeIndexFiles removes the files of index uuid of table r, logging
// what it cannot: they are not referenced any more.
func (e *Engine) removeIndexFiles(r *tableRef, uuid string) {
	ctx := context.Background()
	e.cache.ForgetPrefix(indexCacheKey(r, uuid, ""))
	for info, err := range r.root.List(ctx, indexDir(uuid)) {
		if err == nil {
			err = r.root.Delete(ctx, info.Path)
		}
		if err != nil {
			e.log.Warn("remove an index file", "table", displayID(r.id), "index", uuid, "error", err)
			return
		}
	}
}

// removeBuildFile removes the file of build b of an index of table r.
func (e *Engine) removeBuildFile(r *tableRef, b *indexBuild) {
	if err := r.root.Delete(context.Background(), b.File); err != nil {
		e.log.Warn("remove an index file", "table", displayID(r.id), "path", b.File, "error", err)
	}
}

// OptimizeIndexes queues a rebuild of every built index of table id whose
// last build does not cover every fragment of the latest version (rows
// written, compacted or restored since), as Lance's optimize_indices
// brings its indexes up to date; the rebuilt index covers every fragment,
// and the old build serves searches until the new one is recorded. It
// returns the transaction ids of the rebuilds, TableNotFound (4) and the
// errors of reading the table.
func (e *Engine) OptimizeIndexes(ctx context.Context, id []string) ([]string, error) {
	return (&Engine{shared: e.shared}).rebuild(ctx, id, func(covered, fragments int) bool { return covered < fragments })
}

// rebuildUncovered queues a rebuild of the built indexes of table r that
// cover no fragment of its latest version, which has rows: after a write
// that replaced every fragment (an overwrite, or a restore of a version
// none of whose fragments an index covers), a search would go exactly
// through all of them. It logs what it cannot do: the write it follows
// has succeeded, and searches are right without the rebuild.
func (e *Engine) rebuildUncovered(ctx context.Context, r *tableRef) {
	main := &Engine{shared: e.shared}
	if _, err := main.rebuild(ctx, r.id, func(covered, fragments int) bool { return covered == 0 && fragments > 0 }); err != nil {
		e.log.Warn("queue the rebuild of indexes", "table", displayID(r.id), "error", err)
	}
}

// rebuild queues a rebuild of each built index of table id for which
// stale, given how many of the latest version's fragments its build
// covers and how many the version has, is true; an index being built is
// left alone. It returns the transaction ids.
func (e *Engine) rebuild(ctx context.Context, id []string, stale func(covered, fragments int) bool) ([]string, error) {
	r, err := e.findData(ctx, id)
	if err != nil {
		return nil, err
	}
	s, err := e.open(ctx, r, nil)
	if err != nil {
		return nil, err
	}
	rd := e.reader(r, s)
	recs, err := rd.indexRecords(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ix := range recs {
		if ix.build == nil || ix.Status == store.IndexBuilding {
			continue
		}
		covered := 0
		if col, ok := columnByID(s, ix.def.FieldID); ok {
			cov, err := rd.coverageOf(ix.build, col)
			if err != nil {
				return out, dataError(id, err)
			}
			covered = len(cov.covered)
		}
		if !stale(covered, len(s.ds.Manifest().Fragments)) {
			continue
		}
		txID, err := e.cat.RebuildDatasetIndex(ctx, r.id, ix.UUID, map[string]string{"index": ix.Name, "index_type": ix.Type, "column": ix.def.Column})
		if err != nil {
			return out, err
		}
		out = append(out, txID)
	}
	return out, nil
}
