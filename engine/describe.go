package engine

import (
	"context"

	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
)

// Describe implements store.ManagedData: the schema and size of a version
// as its manifest has them. Deleted counts the rows of the version's
// fragments its deletion files delete, as Lance's num_deleted_rows does
// (a fragment all of whose rows are deleted is no longer one of its
// fragments).
func (e *Engine) Describe(ctx context.Context, id []string, version *int64) (*store.TableData, error) {
	r, err := e.findData(ctx, id)
	if err != nil {
		return nil, err
	}
	s, err := e.open(ctx, r, version)
	if err != nil {
		return nil, err
	}
	m := s.ds.Manifest()
	out := &store.TableData{Version: int64(m.Version), Schema: s.arrow, NumRows: int64(m.Rows()),
		Fragments: int64(len(m.Fragments)), Timestamp: m.Timestamp}
	for _, f := range m.Fragments {
		if f.Deletion != nil {
			out.Deleted += int64(f.Deletion.NumDeleted)
		}
		out.NumBytes += int64(fragmentBytes(f))
	}
	if out.View, err = e.describeView(ctx, r); err != nil {
		return nil, err
	}
	return out, nil
}

// fragmentBytes is the size of a fragment's data files, as its manifest
// records them (0 for files whose size it does not record).
func fragmentBytes(f *table.Fragment) uint64 {
	var n uint64
	for _, df := range f.Files {
		n += df.Size
	}
	return n
}

// Stats implements store.ManagedData: the latest version's rows, the size
// of its fragments' data files (deleted rows included), its indexes
// (numIndices) and the rows of each fragment, deleted ones included.
func (e *Engine) Stats(ctx context.Context, id []string) (*store.TableStats, error) {
	r, err := e.findData(ctx, id)
	if err != nil {
		return nil, err
	}
	s, err := e.open(ctx, r, nil)
	if err != nil {
		return nil, err
	}
	m := s.ds.Manifest()
	out := &store.TableStats{NumRows: int64(m.Rows()), FragmentRows: make([]int64, 0, len(m.Fragments))}
	rd := e.reader(r, s)
	for _, f := range m.Fragments {
		out.FragmentRows = append(out.FragmentRows, int64(f.PhysicalRows))
		for i := range f.Files {
			df := &f.Files[i]
			size := int64(df.Size)
			if size == 0 {
				fr, err := rd.openFile(ctx, f, df)
				if err != nil {
					return nil, dataError(id, err)
				}
				size = fr.Size()
			}
			out.TotalBytes += size
		}
	}
	if out.NumIndices, err = rd.numIndices(ctx); err != nil {
		return nil, err
	}
	return out, nil
}
