package convert

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/schema"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store/sqlite/legacy"
)

// dataset writes the versions of one table's lines as one Lance dataset.
type dataset struct {
	st       legacy.Store
	root     blob.Store
	location string
	maxRows  uint64
	// format is the data file format of the dataset (see fileFormat).
	format file.Version
	// step is called after each durable step (see Options.step).
	step func(string)
	// progress is called as rows are read, at most about once a second,
	// with the branch and version being written.
	progress func(branch string, version int64)
	// forks are the states of lines at the versions branches fork from,
	// by branch and version.
	forks map[forkPoint]*lineState
	// manifests are the manifests written, one per version of each line.
	manifests []legacy.Manifest
	// rows counts the rows read and written.
	rows int64
	// reported is when progress was last called.
	reported time.Time
}

type forkPoint struct {
	branch  string
	version int64
}

// lineState is where the conversion of a line stands: the dataset at the
// last version written, the schema it was written with, and where each
// row id of the row store is in it.
type lineState struct {
	ds     *table.Dataset
	schema *legacy.Schema
	arrow  *arrow.Schema // the Arrow form rows are decoded into
	addrs  rowAddrs
}

func (s *lineState) clone() *lineState {
	c := *s
	c.addrs = s.addrs.clone()
	return &c
}

// writeLine writes every version of line l, after the lines it forks
// from. A branch starts as a Lance branch made from the version it forks
// from; when retention removed the branch's record of that version, its
// manifest goes once the branch's later versions are written. It returns
// an error for a branch whose fork version was not written, and the
// errors of reading rows and writing files.
func (d *dataset) writeLine(ctx context.Context, t *legacy.Table, l *legacy.Line) error {
	forksHere := map[int64]bool{}
	for _, other := range t.Lines {
		if other.Branch != l.Branch && other.Parent == l.Branch {
			forksHere[other.Fork] = true
		}
	}
	versions := l.Versions
	if len(versions) == 0 {
		return nil // a branch whose every version retention removed
	}
	state, prev, forkRecorded := &lineState{}, int64(0), false
	if l.Branch != "" {
		fork, ok := d.forks[forkPoint{l.Parent, l.Fork}]
		if !ok {
			return fmt.Errorf("branch %q starts at version %d of branch %s, which was not converted", l.Branch, l.Fork, branchName(l.Parent))
		}
		state = fork.clone()
		start := legacy.Version{Version: l.Fork, Timestamp: fork.ds.Manifest().Timestamp}
		ds, err := table.OpenVersion(ctx, d.root, l.Parent, uint64(l.Fork), d.options(start))
		if err != nil {
			return err
		}
		if state.ds, err = ds.CreateBranch(ctx, l.Branch); err != nil {
			return fmt.Errorf("create branch %q: %w", l.Branch, err)
		}
		if forkRecorded = versions[0].Version == l.Fork; forkRecorded {
			d.written(l, versions[0], state.ds)
			versions = versions[1:]
		}
		prev = l.Fork
		if forksHere[l.Fork] {
			d.forks[forkPoint{l.Branch, l.Fork}] = state.clone()
		}
		if !l.HasRows() && len(versions) > 0 {
			return fmt.Errorf("branch %q has versions after its fork but no rows", l.Branch)
		}
	}
	// Retention removed with the branch's record of its fork version the
	// rows only the branch's removed versions showed: its first version
	// left is written whole.
	whole := l.Branch != "" && !forkRecorded
	for _, v := range versions {
		var err error
		if state, err = d.writeVersion(ctx, l, state, prev, v, whole); err != nil {
			return fmt.Errorf("version %d of branch %s: %w", v.Version, branchName(l.Branch), err)
		}
		d.written(l, v, state.ds)
		whole = false
		if forksHere[v.Version] {
			d.forks[forkPoint{l.Branch, v.Version}] = state.clone()
		}
		prev = v.Version
	}
	if l.Branch != "" && !forkRecorded {
		if err := state.ds.Store().Delete(ctx, table.ManifestPath(uint64(l.Fork), table.NamingV2)); err != nil {
			return fmt.Errorf("remove the manifest of version %d of branch %q, which retention had removed: %w", l.Fork, l.Branch, err)
		}
	}
	// lance/table wrote a version hint after each commit, with the number
	// it gave the version rather than the one it was published under; the
	// catalog, not a hint, names the newest version of the engine's
	// datasets, which have none.
	if err := state.ds.Store().Delete(ctx, "_versions/latest_version_hint.json"); err != nil && !errors.Is(err, blob.ErrNotFound) {
		return fmt.Errorf("remove the version hint of branch %s: %w", branchName(l.Branch), err)
	}
	return nil
}

// written notes the manifest of version v of line l, which ds is.
func (d *dataset) written(l *legacy.Line, v legacy.Version, ds *table.Dataset) {
	info := ds.ManifestInfo()
	d.manifests = append(d.manifests, legacy.Manifest{Branch: l.Branch, Version: v.Version,
		Path: manifestPath(d.location, l.Branch, info.Path), Size: info.Size})
	d.step(fmt.Sprintf("version %d of %s", v.Version, branchName(l.Branch)))
}

// writeVersion writes version v of line l on top of state, the version
// prev: the first version whole (Create); a version whose schema changed,
// or one asked for whole, whole again (Overwrite); any other as the rows
// it retires (deleted by their addresses) and those it adds (new
// fragments), in an Update, a Delete, an Append, or a Project that
// changes nothing for a version that changed no row. It returns the state
// after v.
func (d *dataset) writeVersion(ctx context.Context, l *legacy.Line, state *lineState, prev int64, v legacy.Version, whole bool) (*lineState, error) {
	s, err := l.SchemaAt(v.Version)
	if err != nil {
		return nil, err
	}
	opts := d.options(v)
	if state.ds == nil || whole || !sameSchema(state.schema, s) {
		as, err := lanceArrow(s.Arrow)
		if err != nil {
			return nil, err
		}
		ls, err := schema.FromArrow(as)
		if err != nil {
			return nil, err
		}
		if _, err := ls.AssignIDs(0); err != nil {
			return nil, err
		}
		var ids []int64
		st := d.root
		if state.ds != nil {
			st = state.ds.Store()
		}
		frags, err := d.writeRows(ctx, st, ls, l, v.Version, l.Rows(ctx, d.st, s, as, 0, v.Version, &ids))
		if err != nil {
			return nil, err
		}
		if state.ds == nil {
			_, err = table.Create(ctx, d.root, ls, frags, table.CreateOptions{Options: opts,
				DataFormat: table.DataFormat{FileFormat: "lance", Version: d.format.String()}})
		} else {
			_, err = state.ds.WithOptions(opts).Overwrite(ctx, ls, frags, nil)
		}
		if err != nil {
			return nil, err
		}
		next := &lineState{schema: s, arrow: as}
		if next.ds, err = d.reopen(ctx, l, v, opts); err != nil {
			return nil, err
		}
		return next, next.addrs.add(ids, newFragments(next.ds, 0))
	}
	retired, err := l.Retired(ctx, d.st, prev, v.Version)
	if err != nil {
		return nil, err
	}
	deleted, err := state.addrs.find(retired)
	if err != nil {
		return nil, err
	}
	var ids []int64
	ds := state.ds.WithOptions(opts)
	frags, err := d.writeRows(ctx, ds.Store(), ds.Manifest().Schema, l, v.Version, l.Rows(ctx, d.st, s, state.arrow, prev, v.Version, &ids))
	if err != nil {
		return nil, err
	}
	firstNew := ds.Manifest().NextFragmentID
	switch {
	case len(deleted) > 0 && len(frags) > 0:
		_, err = ds.Update(ctx, deleted, frags)
	case len(deleted) > 0:
		_, err = ds.Delete(ctx, deleted, "")
	case len(frags) > 0:
		_, err = ds.Append(ctx, frags)
	default:
		_, err = ds.CommitOperation(ctx, &table.Project{Schema: ds.Manifest().Schema})
	}
	if err != nil {
		return nil, err
	}
	next := state.clone()
	if next.ds, err = d.reopen(ctx, l, v, opts); err != nil {
		return nil, err
	}
	return next, next.addrs.add(ids, newFragments(next.ds, firstNew))
}

// writeRows writes rows, those of version v of line l, into new data
// files under st, counting them as they are read.
func (d *dataset) writeRows(ctx context.Context, st blob.Store, ls *schema.Schema, l *legacy.Line, v int64, rows iter.Seq2[arrow.RecordBatch, error]) ([]*table.Fragment, error) {
	counted := func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range rows {
			if err == nil {
				d.rows += rec.NumRows()
				if d.progress != nil && time.Since(d.reported) >= time.Second {
					d.reported = time.Now()
					d.progress(l.Branch, v)
				}
			}
			if !yield(rec, err) {
				return
			}
		}
	}
	return table.WriteFragments(ctx, st, ls, counted, table.WriteOptions{MaxRowsPerFile: d.maxRows, File: file.WriteOptions{Version: d.format}})
}

// reopen opens version v of line l, just committed: the Dataset a commit
// returns carries the number Lance gave the version, not the one the
// committer published it under.
func (d *dataset) reopen(ctx context.Context, l *legacy.Line, v legacy.Version, opts table.Options) (*table.Dataset, error) {
	return table.OpenVersion(ctx, d.root, l.Branch, uint64(v.Version), opts)
}

// options are the options of the commit of version v: it is published
// under v's number and stamped with v's time.
func (d *dataset) options(v legacy.Version) table.Options {
	return table.Options{URI: d.location, Committer: renumbering{version: uint64(v.Version)},
		Now: func() time.Time { return v.Timestamp }}
}

// newFragments returns the fragments of ds whose ids are first or above,
// in id order: those the last commit added (all of them after a Create or
// an Overwrite, first 0).
func newFragments(ds *table.Dataset, first uint64) []*table.Fragment {
	var out []*table.Fragment
	for _, f := range ds.Manifest().Fragments {
		if f.ID >= first {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b *table.Fragment) int { return cmpUint(a.ID, b.ID) })
	return out
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sameSchema reports whether a and b are the same logical schema on the
// same physical columns (a branch's first schema is a copy of its
// parent's).
func sameSchema(a, b *legacy.Schema) bool {
	return a == b || a.Arrow.Equal(b.Arrow) && a.Arrow.Metadata().Equal(b.Arrow.Metadata()) && reflect.DeepEqual(a.Fields, b.Fields)
}

// renumbering publishes a manifest, as Lance does (a put-if-absent at its
// final name), under the number of the row store's version it converts:
// lance/table numbers a commit one past the version it builds on, and
// the row store's versions have gaps where retention removed some (Lance
// leaves the same gaps when it cleans up old versions).
type renumbering struct {
	version uint64
}

// Commit implements table.Committer.
func (r renumbering) Commit(ctx context.Context, c *table.Commit) error {
	if c.Version != r.version {
		m, err := table.DecodeManifest(c.Manifest)
		if err != nil {
			return err
		}
		m.Version = r.version
		if c.Manifest, err = table.EncodeManifest(m); err != nil {
			return err
		}
		c.Version, c.Path = r.version, table.ManifestPath(r.version, table.NamingV2)
	}
	err := table.PutIfAbsentCommitter{}.Commit(ctx, c)
	if errors.Is(err, table.ErrVersionExists) {
		// Only an earlier attempt of this conversion writes here, and a
		// rerun starts from an empty location.
		return fmt.Errorf("version %d is already written: %w", r.version, err)
	}
	return err
}

// rowAddrs maps the row ids of the row store to the addresses of the rows
// in the dataset (fragment id << 32 | offset), sorted by row id.
type rowAddrs struct {
	ids   []int64
	addrs []uint64
}

func (a rowAddrs) clone() rowAddrs {
	return rowAddrs{ids: slices.Clone(a.ids), addrs: slices.Clone(a.addrs)}
}

// add records that rows ids were written, in order, into frags. It
// returns an error when their counts differ.
func (a *rowAddrs) add(ids []int64, frags []*table.Fragment) error {
	var n uint64
	for _, f := range frags {
		n += f.PhysicalRows
	}
	if n != uint64(len(ids)) {
		return fmt.Errorf("%d rows were read and %d written", len(ids), n)
	}
	sorted := len(a.ids) == 0 || len(ids) == 0 || ids[0] > a.ids[len(a.ids)-1]
	i := 0
	for _, f := range frags {
		for off := range f.PhysicalRows {
			a.ids = append(a.ids, ids[i])
			a.addrs = append(a.addrs, f.ID<<32|off)
			i++
		}
	}
	if !sorted {
		sort.Sort(byID{a})
	}
	return nil
}

type byID struct{ *rowAddrs }

func (b byID) Len() int           { return len(b.ids) }
func (b byID) Less(i, j int) bool { return b.ids[i] < b.ids[j] }
func (b byID) Swap(i, j int) {
	b.ids[i], b.ids[j] = b.ids[j], b.ids[i]
	b.addrs[i], b.addrs[j] = b.addrs[j], b.addrs[i]
}

// find returns the offsets of rows ids by fragment, as Delete and Update
// take them. It returns an error for a row id that was never written.
func (a *rowAddrs) find(ids []int64) (map[uint64]*roaring.Bitmap, error) {
	out := map[uint64]*roaring.Bitmap{}
	for _, id := range ids {
		i, ok := slices.BinarySearch(a.ids, id)
		if !ok {
			return nil, fmt.Errorf("row %d is retired but was never written", id)
		}
		frag := a.addrs[i] >> 32
		if out[frag] == nil {
			out[frag] = roaring.New()
		}
		out[frag].Add(uint32(a.addrs[i]))
	}
	return out, nil
}

// checkTypes returns an error naming the first column of a schema of t
// that a Lance dataset cannot store.
func checkTypes(t *legacy.Table) error {
	for _, l := range t.Lines {
		for _, s := range l.Schemas {
			as, err := lanceArrow(s.Arrow)
			if err != nil {
				return err
			}
			if _, err := schema.FromArrow(as); err != nil {
				return fmt.Errorf("the schema of version %d of branch %s: %w", s.Version, branchName(l.Branch), err)
			}
		}
	}
	return nil
}

// fileFormat returns the data file format of the dataset of t: 2.0, what
// the engine writes, unless a schema of t has a struct, whose nulls only
// 2.1 and later keep (then 2.2, what Lance creates datasets in); every
// file of a dataset has its format.
func fileFormat(t *legacy.Table) file.Version {
	for _, l := range t.Lines {
		for _, s := range l.Schemas {
			for _, f := range s.Arrow.Fields() {
				if hasStruct(f.Type) {
					return file.V2_2
				}
			}
		}
	}
	return file.V2_0
}

func hasStruct(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.StructType:
		return true
	case arrow.ListLikeType:
		return hasStruct(t.Elem())
	}
	return false
}

// lanceArrow returns the Arrow schema rows of s are written with: s, with
// 32- and 64-bit decimals widened to 128 bits (Lance stores no narrower
// decimal; the values are the same). Maps, which Lance does not store,
// are refused with an error naming the column.
func lanceArrow(s *arrow.Schema) (*arrow.Schema, error) {
	fields := slices.Clone(s.Fields())
	for i, f := range fields {
		dt, err := lanceType(f.Name, f.Type)
		if err != nil {
			return nil, err
		}
		fields[i].Type = dt
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md), nil
}

func lanceType(path string, dt arrow.DataType) (arrow.DataType, error) {
	switch t := dt.(type) {
	case *arrow.Decimal32Type:
		return &arrow.Decimal128Type{Precision: t.Precision, Scale: t.Scale}, nil
	case *arrow.Decimal64Type:
		return &arrow.Decimal128Type{Precision: t.Precision, Scale: t.Scale}, nil
	case *arrow.MapType:
		return nil, fmt.Errorf("column %s is a map (%s), which a Lance dataset cannot store; "+
			"drop it, or cast it to a list of structs, with the release that wrote it", path, dt)
	case *arrow.StructType:
		fields := slices.Clone(t.Fields())
		for i, f := range fields {
			var err error
			if fields[i].Type, err = lanceType(path+"."+f.Name, f.Type); err != nil {
				return nil, err
			}
		}
		return arrow.StructOf(fields...), nil
	case *arrow.ListType:
		item := t.ElemField()
		var err error
		if item.Type, err = lanceType(path+".item", item.Type); err != nil {
			return nil, err
		}
		return arrow.ListOfField(item), nil
	case *arrow.LargeListType:
		item := t.ElemField()
		var err error
		if item.Type, err = lanceType(path+".item", item.Type); err != nil {
			return nil, err
		}
		return arrow.LargeListOfField(item), nil
	}
	return dt, nil
}

// branchName names a branch in messages.
func branchName(b string) string {
	if b == "" {
		return "main"
	}
	return b
}
