package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/lancens/lancens/store"
)

// Staged writes
//
// A write converts its rows to SQL values before it takes the writer, a
// chunk at a time (Options.WriteChunkRows, WriteChunkBytes). A write whose
// rows fit in one chunk runs in one transaction. A larger one is staged:
// every chunk but the last is added in a write transaction of its own, so
// other writes commit in between, and one last transaction adds the last
// chunk and records the new version, with whatever else the write changes
// (retiring rows, a new schema, the catalog entry). The write still commits
// whole or not at all: nobody sees staged rows before that last commit.
//
//   - Rows added to an existing table carry _from = the new version, which
//     no reader asks for before its record commits. Rows the write retires
//     (an overwrite) are retired in the last transaction only, since some
//     reads take _to = maxVersion to mean "visible in the latest version".
//   - The rows of a new table go into a staging table (staging_<id>, with
//     the columns of a rows table), which the last transaction renames to
//     the table's rows table.
//   - The source rows of a merge go into a staging table; the last
//     transaction merges from it, and it is dropped afterwards.
//   - Index maintenance is unchanged: full-text and label-list triggers fire
//     as staged rows go in, and vector indexes see rows past the ones they
//     hold as their unindexed tail, so the rows are indexed exactly as in
//     one transaction.
//
// Serialisation. A staged write to an existing table holds it (a
// reservation, in memory) from before its first chunk to after its last.
// The reservation is taken inside a write transaction that also checks the
// table is still the one (and at the schema) the rows were converted for,
// so writes that found the table before have committed by then. Inside the
// writer, any other write that finds a held table (findTable) fails with
// tableBusy: group commit rolls it back to its savepoint, and DB.write
// waits outside the writer until the reservation ends and runs it again.
// Reads never wait.
//
// Failure. When a staged write fails (an error, a cancelled request, a
// chunk that will not convert), it removes what it added before its
// reservation ends, in bounded transactions too: its staging table, or the
// rows above the highest row id the table had before (all of them its own,
// the table being held) with their full-text and label-list index entries.
// One tombstone row keeps the highest of those row ids, never visible
// (_from = _to), because full-text postings in memory may already hold them
// and SQLite would otherwise give them to the next rows. Should the removal
// itself fail (a full disk), the table stays held; the next write to it
// tries again and answers ServiceUnavailable while it cannot. When the
// process dies instead, Open sweeps: it drops staging tables, deletes rows
// whose _from is past their table's latest version and tombstones, and the
// index entries of row ids above the highest row left.

// tombstoneVersion is the _from and _to of a tombstone row.
const tombstoneVersion = maxVersion - 1

// stagingPrefix starts the name of every staging table.
const stagingPrefix = "staging_"

// errStale reports that the table a write prepared its rows for changed
// before the write took the writer; the write starts again.
var errStale = errors.New("sqlite: the table changed while the write was being prepared")

// chunkLimits bound one chunk of a write.
type chunkLimits struct {
	rows  int
	bytes int64
}

// stagingHooks let tests watch and interrupt staged writes; nil hooks do
// nothing.
type stagingHooks struct {
	// chunk runs after chunk n (from 1) of a staged write has committed;
	// an error fails the write there.
	chunk func(n int) error
	// cleanup runs before each attempt to remove a failed write's rows; an
	// error fails the attempt.
	cleanup func() error
	// waiting runs when a write waits for a table a staged write holds.
	waiting func()
}

// writeStaging is the state of staged writes: the tables they hold, the
// size of their chunks, and test hooks.
type writeStaging struct {
	// held are the tables staged writes hold.
	held tableLocks
	// chunk bounds the rows a staged write adds per transaction.
	chunk chunkLimits
	hooks stagingHooks
}

// rows returns a source of the rows read from in converted for ts, in
// chunks of the staging limits.
func (s *writeStaging) rows(ts *tableSchema, in *replay, versioned bool) *rowSource {
	return &rowSource{ts: ts, in: in, versioned: versioned, maxRows: s.chunk.rows, maxBytes: s.chunk.bytes}
}

// tableLocks are the tables held by staged writes, by table row id.
type tableLocks struct {
	mu   sync.Mutex
	held map[int64]*reservation
}

// reservation is one staged write's hold on a table.
type reservation struct {
	locks *tableLocks
	table int64
	uuid  string
	name  []string
	done  chan struct{} // closed when the hold ends
	// failed is closed when the write's rows could not be removed; repair
	// tries again. mu serialises the attempts.
	failed chan struct{}
	mu     sync.Mutex
	repair func(context.Context) error
	ended  sync.Once
}

// holder returns the reservation holding table t, or nil.
func (l *tableLocks) holder(t *tableRow) *reservation {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.held[t.rowID]; r != nil && r.uuid == t.UUID {
		return r
	}
	return nil
}

// hold makes a reservation of table t, which no other holds.
func (l *tableLocks) hold(t *tableRow) *reservation {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = map[int64]*reservation{}
	}
	r := &reservation{locks: l, table: t.rowID, uuid: t.UUID, name: t.ID, done: make(chan struct{}), failed: make(chan struct{})}
	l.held[t.rowID] = r
	return r
}

// release ends the reservation.
func (r *reservation) release() {
	r.ended.Do(func() {
		r.locks.mu.Lock()
		if r.locks.held[r.table] == r {
			delete(r.locks.held, r.table)
		}
		r.locks.mu.Unlock()
		close(r.done)
	})
}

// wait returns once r has ended, or ctx's error if ctx ends first. When the
// staged write's rows could not be removed, it tries again and returns
// ServiceUnavailable (17) if they still cannot be.
func (r *reservation) wait(ctx context.Context) error {
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-r.failed:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.done:
		return nil
	default:
	}
	if err := r.repair(ctx); err != nil {
		return store.Errorf(store.CodeServiceUnavailable, "table %s keeps the rows of a failed write, which cannot be removed now: %v", displayID(r.name), err)
	}
	r.release()
	return nil
}

// tableBusy is the error of a write that found a table held by a staged
// write; DB.write waits for the reservation and runs the write again.
type tableBusy struct{ held *reservation }

func (e *tableBusy) Error() string {
	return fmt.Sprintf("sqlite: table %s is being written", displayID(e.held.name))
}

// notHeld returns tableBusy when tx is a write and a staged write holds
// table t.
func (tx *Tx) notHeld(t *tableRow) error {
	if tx.staging == nil {
		return nil
	}
	if r := tx.staging.held.holder(t); r != nil {
		return &tableBusy{r}
	}
	return nil
}

// sameTable finds table id in a write and returns it with its latest
// version. It returns errStale when the table is no longer the managed table
// with the given uuid, at the schema version, that the write's rows were
// converted for.
func sameTable(ctx context.Context, tx *Tx, id []string, uuid string, schemaVersion int64) (*tableRow, int64, error) {
	t, err := findTable(ctx, tx, id)
	if err != nil {
		return nil, 0, err
	}
	if t.UUID != uuid || t.Kind != store.Managed {
		return nil, 0, errStale
	}
	v, ts, err := schemaAt(ctx, tx, t, nil)
	if err != nil {
		return nil, 0, err
	}
	if ts.version != schemaVersion {
		return nil, 0, errStale
	}
	return t, v, nil
}

// holdTable takes table id for a staged write once no other write holds it,
// checking as sameTable does, and returns the reservation, the table and
// its latest version.
func (db *DB) holdTable(ctx context.Context, id []string, uuid string, schemaVersion int64) (*reservation, *tableRow, int64, error) {
	var r *reservation
	var t *tableRow
	var v int64
	err := db.write(ctx, func(tx *Tx) error {
		var err error
		if t, v, err = sameTable(ctx, tx, id, uuid, schemaVersion); err != nil {
			return err
		}
		r = tx.staging.held.hold(t)
		return nil
	})
	if err != nil {
		if r != nil {
			// Held inside a transaction that did not commit.
			r.release()
		}
		return nil, nil, 0, err
	}
	return r, t, v, nil
}

// stagingName returns a new staging table name.
func stagingName() string {
	return stagingPrefix + strings.ReplaceAll(newUUID(), "-", "")
}

// stagedWrite is a write whose rows go in over several transactions.
type stagedWrite struct {
	db *DB
	// held is the existing table written to, if any.
	held *reservation
	// table is the SQL table the rows go into, with the physical columns
	// columns (in the order of the values); rows get _from = version when
	// they are versioned.
	table   string
	columns []string
	version int64
	// staging says table is this write's own staging table.
	staging bool
	// base: rows of the held table with a higher _rowid are this write's
	// (when they go into its rows table).
	base int64
	// chunks and rows count what has committed.
	chunks int
	rows   int64
}

// stage adds every chunk of src but the last, first (already converted)
// included, one transaction each, converting the next chunk while one is
// written; begin runs in the first transaction before its rows. Each
// chunk's batches are released once it is written, and src stops keeping
// batches for a restart once the first chunk has committed (the write
// cannot start over from then on). It returns the last chunk, for the
// transaction that commits the write.
func (w *stagedWrite) stage(ctx context.Context, first *boundRows, src *rowSource, begin func(tx *Tx) error) (*boundRows, error) {
	cur := first
	for !src.done() {
		written := make(chan error, 1)
		go func(c *boundRows, starting bool) {
			written <- w.db.write(ctx, func(tx *Tx) error {
				if starting {
					if err := w.start(ctx, tx, begin); err != nil {
						return err
					}
				}
				return w.add(ctx, tx, c)
			})
		}(cur, w.chunks == 0)
		next, err := src.next()
		writeErr := <-written
		cur.release()
		if writeErr == nil {
			w.chunks++
			w.rows += int64(cur.rows)
			if w.chunks == 1 {
				src.settle()
			}
			if h := w.db.staging.hooks.chunk; h != nil {
				writeErr = h(w.chunks)
			}
		}
		if writeErr != nil {
			next.release()
			return nil, writeErr
		}
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// start runs in the first transaction: it notes where the write's rows
// will begin in the held table, then runs begin.
func (w *stagedWrite) start(ctx context.Context, tx *Tx, begin func(tx *Tx) error) error {
	if w.held != nil && !w.staging {
		if err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT coalesce(max(_rowid), 0) FROM %s`, w.table)).Scan(&w.base); err != nil {
			return internal("stage rows", err)
		}
	}
	return begin(tx)
}

// check returns TableNotFound when the held table has gone: dropping a
// namespace drops its tables without finding them one by one.
func (w *stagedWrite) check(ctx context.Context, tx *Tx) error {
	if w.held == nil {
		return nil
	}
	var uuid string
	err := tx.QueryRowCached(ctx, `SELECT uuid FROM tables WHERE id = ?`, w.held.table).Scan(&uuid)
	if errors.Is(err, sql.ErrNoRows) || err == nil && uuid != w.held.uuid {
		return store.Errorf(store.CodeTableNotFound, "table %s was dropped during the write", displayID(w.held.name))
	}
	if err != nil {
		return internal("find table", err)
	}
	return nil
}

// add writes rows c in tx.
func (w *stagedWrite) add(ctx context.Context, tx *Tx, c *boundRows) error {
	if err := w.check(ctx, tx); err != nil {
		return err
	}
	return c.insert(ctx, tx, w.table, w.columns, w.version)
}

// finish commits the write with commit, which adds the last chunk and
// records the version, and ends the reservation. On error nothing of
// commit's is left; the caller aborts.
func (w *stagedWrite) finish(ctx context.Context, commit func(tx *Tx) error) error {
	if err := w.db.write(ctx, commit); err != nil {
		return err
	}
	if w.held != nil {
		w.held.release()
	}
	return nil
}

// abort removes what the failed write staged and ends its reservation,
// or, when the rows cannot be removed, leaves the table held for the next
// write to it to try again. It returns cause.
func (w *stagedWrite) abort(ctx context.Context, cause error) error {
	ctx = context.WithoutCancel(ctx)
	err := w.cleanup(ctx)
	if w.held == nil {
		// A staging table left behind is invisible; Open drops it.
		return cause
	}
	if err != nil {
		w.held.repair = w.cleanup
		close(w.held.failed)
		return cause
	}
	w.held.release()
	return cause
}

// cleanup removes what the write staged: its staging table, or its rows
// in the held table with their index entries, leaving a tombstone at the
// highest row id. It returns the error of a transaction that failed; run
// again, it finishes the work.
func (w *stagedWrite) cleanup(ctx context.Context) error {
	if h := w.db.staging.hooks.cleanup; h != nil {
		if err := h(); err != nil {
			return err
		}
	}
	if w.staging {
		return w.db.write(ctx, func(tx *Tx) error { return dropStaging(ctx, tx, w.table) })
	}
	if w.held == nil || w.chunks == 0 {
		return nil
	}
	t := &tableRow{rowID: w.held.table}
	gone := false
	var top int64
	err := w.db.write(ctx, func(tx *Tx) error {
		if err := w.check(ctx, tx); err != nil {
			gone = errors.Is(err, store.ErrTableNotFound)
			if gone {
				return nil
			}
			return err
		}
		if err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT coalesce(max(_rowid), 0) FROM %s`, w.table)).Scan(&top); err != nil {
			return internal("remove staged rows", err)
		}
		return deleteIndexEntries(ctx, tx, t, w.base)
	})
	if err != nil || gone {
		return err
	}
	slice := int64(4 * w.db.staging.chunk.rows)
	for lo := w.base; lo < top; lo += slice {
		hi := min(lo+slice, top)
		err := w.db.write(ctx, func(tx *Tx) error {
			if err := w.check(ctx, tx); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf(`DELETE FROM %s WHERE _rowid > ? AND _rowid <= ?`, w.table), lo, hi); err != nil {
				return internal("remove staged rows", err)
			}
			if hi < top {
				return nil
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (_rowid, _from, _to) VALUES (?, ?, ?)`, w.table),
				top, tombstoneVersion, tombstoneVersion); err != nil {
				return internal("remove staged rows", err)
			}
			return nil
		})
		if errors.Is(err, store.ErrTableNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dropStaging drops a staging table.
func dropStaging(ctx context.Context, tx *Tx, name string) error {
	if _, err := tx.Exec(ctx, `DROP TABLE IF EXISTS `+name); err != nil {
		return internal("drop staging table", err)
	}
	return nil
}

// deleteIndexEntries deletes the entries of t's full-text and label-list
// index tables for rows whose id is above id.
func deleteIndexEntries(ctx context.Context, tx *Tx, t *tableRow, id int64) error {
	indexes, err := listIndexRows(ctx, tx, t)
	if err != nil {
		return err
	}
	for _, r := range indexes {
		var col string
		switch r.indexType {
		case store.IndexInverted:
			col = "rowid"
		case store.IndexLabelList:
			col = "row"
		default:
			continue
		}
		name := sqlIndexName(t, r)
		var exists int
		if err := tx.QueryRowCached(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, name).Scan(&exists); err != nil {
			return internal("remove index entries", err)
		}
		if exists == 0 {
			continue
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf(`DELETE FROM %s WHERE %s > ?`, name, col), id); err != nil {
			return internal("remove index entries", err)
		}
	}
	return nil
}

// sweepStaged removes what staged writes left when the process stopped in
// the middle of one: staging tables; the rows of each managed table whose
// _from is past its latest version, and its tombstones; and the index
// entries of row ids above the highest row left. Open runs it before any
// other write.
func (db *DB) sweepStaged(ctx context.Context) error {
	return db.write(ctx, func(tx *Tx) error {
		names, err := queryStrings(ctx, tx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE ? ESCAPE '\'`,
			strings.ReplaceAll(stagingPrefix, "_", `\_`)+"%")
		if err != nil {
			return err
		}
		for _, name := range names {
			if err := dropStaging(ctx, tx, name); err != nil {
				return err
			}
		}
		type managed struct{ id, latest int64 }
		var tables []managed
		rows, err := tx.QueryCached(ctx, `SELECT m.table_id, coalesce((SELECT max(version) FROM table_versions v
			WHERE v.table_id = m.table_id AND v.branch = ''), 0) FROM managed_tables m`)
		if err != nil {
			return internal("sweep staged rows", err)
		}
		for rows.Next() {
			var m managed
			if err := rows.Scan(&m.id, &m.latest); err != nil {
				rows.Close()
				return internal("sweep staged rows", err)
			}
			tables = append(tables, m)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return internal("sweep staged rows", err)
		}
		for _, m := range tables {
			if err := sweepTable(ctx, tx, &tableRow{rowID: m.id}, m.latest); err != nil {
				return err
			}
		}
		return sweepLines(ctx, tx)
	})
}

// sweepTable removes the staged rows and tombstones of managed table t,
// whose latest version is latest.
func sweepTable(ctx context.Context, tx *Tx, t *tableRow, latest int64) error {
	var removed int64
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`DELETE FROM %s WHERE _to = ? AND _from > ?`, []any{maxVersion, latest}},
		{`DELETE FROM %s WHERE _to = ?`, []any{tombstoneVersion}},
	} {
		r, err := tx.Exec(ctx, fmt.Sprintf(q.sql, dataTable(t)), q.args...)
		if err != nil {
			return internal("sweep staged rows", err)
		}
		n, err := r.RowsAffected()
		if err != nil {
			return internal("sweep staged rows", err)
		}
		removed += n
	}
	if removed == 0 {
		return nil
	}
	var top int64
	if err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT coalesce(max(_rowid), 0) FROM %s`, dataTable(t))).Scan(&top); err != nil {
		return internal("sweep staged rows", err)
	}
	return deleteIndexEntries(ctx, tx, t, top)
}
