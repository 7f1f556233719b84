package sqlite

import (
	"container/list"
	"context"
	"sync"
)

// cached is a value the memory cache can hold: it reports the bytes it
// keeps alive.
type cached interface {
	cacheBytes() int64
}

// cacheKey names a cached value: what it is (name: "vectors/<column>",
// "index/<uuid>", ...) of which table, at which version. Values that
// follow the table's latest rows (loaded indexes, posting lists) have no
// version (noVersion).
type cacheKey struct {
	table   string // table uuid
	name    string
	version int64
}

// noVersion is the version of cache keys that do not name one.
const noVersion = -1

// memCache is the one memory budget of the read caches: visible row sets,
// filter columns, vector sets, loaded vector indexes and posting lists. It
// keeps recently used values within a byte budget, least recently used
// first out, and loads each key once however many callers ask at the same
// time; a caller waits only for the key it asked for. Versioned values are
// immutable once cached. Caching a value of a newer version releases the
// same value at older versions: reads go to the latest version almost
// always, and every write makes one.
type memCache struct {
	mu      sync.Mutex
	budget  int64
	used    int64
	order   *list.List // of *cacheEntry, most recent first
	entries map[cacheKey]*list.Element
	loading map[cacheKey]chan struct{} // closed when the load ends
	// beforeLoad, when set (by tests), runs before each load.
	beforeLoad func(cacheKey)
}

type cacheEntry struct {
	key  cacheKey
	val  cached
	size int64
}

func newMemCache(budget int64) *memCache {
	return &memCache{budget: budget, order: list.New(), entries: map[cacheKey]*list.Element{}, loading: map[cacheKey]chan struct{}{}}
}

// get returns the value stored under key, loading it with load once however
// many callers ask at the same time. A value larger than the whole budget is
// returned but not kept. It returns load's error (and caches nothing), or
// ctx's error when ctx ends while another caller loads the key.
func (c *memCache) get(ctx context.Context, key cacheKey, load func() (cached, error)) (cached, error) {
	for {
		c.mu.Lock()
		if el, ok := c.entries[key]; ok {
			c.order.MoveToFront(el)
			c.mu.Unlock()
			return el.Value.(*cacheEntry).val, nil
		}
		if done, ok := c.loading[key]; ok {
			c.mu.Unlock()
			select {
			case <-done:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		c.loading[key] = done
		hook := c.beforeLoad
		c.mu.Unlock()
		if hook != nil {
			hook(key)
		}
		val, err := load()
		c.mu.Lock()
		delete(c.loading, key)
		close(done)
		if err == nil {
			c.insert(key, val)
		}
		c.mu.Unlock()
		return val, err
	}
}

// insert caches val under key and evicts what the budget cannot hold.
// Callers hold c.mu.
func (c *memCache) insert(key cacheKey, val cached) {
	size := val.cacheBytes()
	if size > c.budget {
		return
	}
	if key.version != noVersion {
		c.releaseOlder(key)
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, val: val, size: size})
	c.used += size
	c.evict()
}

// releaseOlder drops the entries of key's table and name at older versions.
// Callers hold c.mu.
func (c *memCache) releaseOlder(key cacheKey) {
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if k := el.Value.(*cacheEntry).key; k.table == key.table && k.name == key.name && k.version < key.version {
			c.remove(el)
		}
		el = next
	}
}

// evict drops least recently used entries until the budget holds them.
// Callers hold c.mu.
func (c *memCache) evict() {
	for c.used > c.budget {
		c.remove(c.order.Back())
	}
}

func (c *memCache) remove(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.order.Remove(el)
	delete(c.entries, e.key)
	c.used -= e.size
}

// resize records that val, cached under key, changed size (a posting list
// that took in new rows), evicting to stay within the budget. It does
// nothing when key no longer holds val.
func (c *memCache) resize(key cacheKey, val cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok || el.Value.(*cacheEntry).val != val {
		return
	}
	e := el.Value.(*cacheEntry)
	size := val.cacheBytes()
	c.used += size - e.size
	e.size = size
	if size > c.budget {
		c.remove(el)
	}
	c.evict()
}

// forget drops the entry under key, if any.
func (c *memCache) forget(key cacheKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
}

// forgetTables drops every entry of the tables with the given uuids.
func (c *memCache) forgetTables(uuids []string) {
	if len(uuids) == 0 {
		return
	}
	gone := make(map[string]bool, len(uuids))
	for _, u := range uuids {
		gone[u] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if gone[el.Value.(*cacheEntry).key.table] {
			c.remove(el)
		}
		el = next
	}
}

// bytes returns the bytes the cached values hold.
func (c *memCache) bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}
