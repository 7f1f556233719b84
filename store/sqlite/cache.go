package sqlite

import (
	"container/list"
	"context"
	"slices"
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
	// versions lists the entries of each versioned series (a table's
	// value of one name), in no order.
	versions map[seriesKey][]*list.Element
	loading  map[cacheKey]chan struct{} // closed when the load ends
	// beforeLoad, when set (by tests), runs before each load.
	beforeLoad func(cacheKey)
}

// seriesKey names a value of a table at every version.
type seriesKey struct {
	table, name string
}

func (k cacheKey) series() seriesKey { return seriesKey{k.table, k.name} }

type cacheEntry struct {
	key  cacheKey
	val  cached
	size int64
}

func newMemCache(budget int64) *memCache {
	return &memCache{budget: budget, order: list.New(), entries: map[cacheKey]*list.Element{},
		versions: map[seriesKey][]*list.Element{}, loading: map[cacheKey]chan struct{}{}}
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
		return c.load(key, done, hook, load)
	}
}

// load runs load for key and caches its value; whatever happens, even a
// panic, it then wakes the callers waiting on done.
func (c *memCache) load(key cacheKey, done chan struct{}, hook func(cacheKey), load func() (cached, error)) (val cached, err error) {
	defer func() {
		c.mu.Lock()
		delete(c.loading, key)
		close(done)
		if err == nil && val != nil {
			c.insert(key, val)
		}
		c.mu.Unlock()
	}()
	if hook != nil {
		hook(key)
	}
	return load()
}

// insert caches val under key and evicts what the budget cannot hold.
// Callers hold c.mu.
func (c *memCache) insert(key cacheKey, val cached) {
	size := val.cacheBytes()
	if size > c.budget {
		return
	}
	el := c.order.PushFront(&cacheEntry{key: key, val: val, size: size})
	c.entries[key] = el
	c.used += size
	if key.version != noVersion {
		sk := key.series()
		for _, old := range slices.Clone(c.versions[sk]) {
			if old.Value.(*cacheEntry).key.version < key.version {
				c.remove(old)
			}
		}
		c.versions[sk] = append(c.versions[sk], el)
	}
	c.evict()
}

// evict drops least recently used entries until the budget holds them.
// Callers hold c.mu.
func (c *memCache) evict() {
	for c.used > c.budget && c.order.Len() > 0 {
		c.remove(c.order.Back())
	}
}

func (c *memCache) remove(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.order.Remove(el)
	delete(c.entries, e.key)
	c.used -= e.size
	if e.key.version != noVersion {
		sk := e.key.series()
		rest := slices.DeleteFunc(c.versions[sk], func(x *list.Element) bool { return x == el })
		if len(rest) == 0 {
			delete(c.versions, sk)
		} else {
			c.versions[sk] = rest
		}
	}
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
