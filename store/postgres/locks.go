package postgres

import (
	"context"
	"hash/fnv"
	"slices"

	"github.com/lancens/lancens/store"
)

var _ store.LocationLocker = (*DB)(nil)

// LockLocations implements store.LocationLocker with session advisory
// locks, one per location (keyed by a hash of its normalised form), taken
// in key order on a connection of a pool of their own: lock holders then
// never wait for a connection that another holder keeps. The locks end
// with the session, so a replica that dies releases them.
func (db *DB) LockLocations(ctx context.Context, locations []string) (func(), error) {
	keys := make([]int64, len(locations))
	for i, loc := range locations {
		h := fnv.New64a()
		h.Write([]byte(store.LocationKey(loc)))
		keys[i] = int64(h.Sum64())
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	conn, err := db.locks.Acquire(ctx)
	if err != nil {
		return nil, classify(err)
	}
	for _, k := range keys {
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, k); err != nil {
			// Ending the session releases the locks taken so far.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
			conn.Release()
			return nil, classify(err)
		}
	}
	return func() {
		ctx := context.WithoutCancel(ctx)
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock_all()`); err != nil {
			_ = conn.Conn().Close(ctx)
		}
		conn.Release()
	}, nil
}
