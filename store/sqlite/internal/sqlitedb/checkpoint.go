package sqlitedb

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// walSafetyPages is the writer connection's automatic checkpoint limit:
// 256 MiB of SQLite's default 4 KiB pages, which lancens databases use.
// The checkpointer normally keeps the WAL far below it; should it fall
// behind, a commit that takes the WAL past this many pages checkpoints
// itself. It is high so that bulk writes (several MiB per commit) leave
// the copying to the checkpointer, on another core, instead of paying for
// it inside their commits.
const walSafetyPages = 65536

// walKeepBytes is the size SQLite cuts the WAL file back to when the log
// restarts (journal_size_limit): what an idle database keeps on disk.
const walKeepBytes = 16 << 20

// checkpointPause is the least time between two background checkpoints.
const checkpointPause = 100 * time.Millisecond

// checkpointer copies committed WAL frames into the database file on its
// own connection, after commits (at most one per checkpointPause), so that
// a commit does not pay for copying earlier ones (SQLite's automatic
// checkpoint runs inside the commit that crosses its limit). Checkpoints are PASSIVE: they never block readers or
// the writer, and skip frames a reader still needs.
type checkpointer struct {
	pool *sql.DB
	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

// startCheckpointer opens the checkpoint connection and starts its
// goroutine. Returns an error when the connection cannot be opened.
func (db *DB) startCheckpointer(ctx context.Context, synchronous string) error {
	pool, err := sql.Open("sqlite", dsn(db.path, synchronous, roleCheckpoint))
	if err != nil {
		return fmt.Errorf("sqlite: open checkpointer: %w", err)
	}
	pool.SetMaxOpenConns(1)
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		return fmt.Errorf("sqlite: open checkpointer: %w", err)
	}
	c := &checkpointer{pool: pool, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	db.checkpoints = c
	go func() {
		defer close(c.done)
		for {
			select {
			case <-c.stop:
				return
			case <-c.kick:
			}
			// A busy or failed passive checkpoint leaves the frames for the
			// next one (or the writer's safety limit); nothing is lost.
			_, _ = pool.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
			// Commits that come meanwhile wait for one checkpoint after the
			// pause: a checkpoint syncs the database file, which small
			// commits in quick succession should not pay for one by one.
			select {
			case <-c.stop:
				return
			case <-time.After(checkpointPause):
			}
		}
	}()
	return nil
}

// committed tells the checkpointer that a transaction committed. Before
// the checkpointer starts (migrations), c is nil and SQLite's own limit
// applies.
func (c *checkpointer) committed() {
	if c == nil {
		return
	}
	select {
	case c.kick <- struct{}{}:
	default: // a checkpoint is already due
	}
}

// close stops the goroutine and closes the connection.
func (c *checkpointer) close() error {
	close(c.stop)
	<-c.done
	return c.pool.Close()
}
