// Package memcache keeps values read from storage in memory within one byte
// budget: decoded columns, vectors, deletion bitmaps, opened files and
// manifests of the tables an engine serves. Values are immutable once
// cached and are found by a string key that names what they are (the
// caller's scheme; the Lance engine keys a column by its data file and
// field, so versions that share a file share its columns).
//
// The least recently used values leave first when the budget is spent, a
// value larger than the whole budget is returned but not kept, and each
// key is loaded once however many callers ask for it at the same time: a
// caller waits only for the key it asked for, and a load that fails leaves
// nothing behind, so the next caller tries again.
package memcache

import (
	"container/list"
	"context"
	"strings"
	"sync"
)

// Value is what the cache holds: it reports the bytes it keeps alive.
type Value interface {
	CacheBytes() int64
}

// Cache is a byte-budgeted, least-recently-used cache with single-flight
// loads. Its methods are safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	budget  int64
	used    int64
	order   *list.List // of *entry, most recent first
	entries map[string]*list.Element
	loading map[string]chan struct{} // closed when the load ends
	hits    int64
	misses  int64
}

type entry struct {
	key  string
	val  Value
	size int64
}

// New returns an empty cache that holds at most budget bytes.
func New(budget int64) *Cache {
	return &Cache{budget: max(budget, 0), order: list.New(), entries: map[string]*list.Element{}, loading: map[string]chan struct{}{}}
}

// Get returns the value stored under key, loading it with load when it is
// missing, once however many callers ask at the same time. It returns
// load's error (and caches nothing), or ctx's error when ctx ends while
// another caller loads the key.
func (c *Cache) Get(ctx context.Context, key string, load func() (Value, error)) (Value, error) {
	for {
		c.mu.Lock()
		if el, ok := c.entries[key]; ok {
			c.order.MoveToFront(el)
			c.hits++
			c.mu.Unlock()
			return el.Value.(*entry).val, nil
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
		c.misses++
		c.mu.Unlock()
		return c.load(key, done, load)
	}
}

// load runs load for key and caches its value; whatever happens, even a
// panic, it then wakes the callers waiting on done.
func (c *Cache) load(key string, done chan struct{}, load func() (Value, error)) (val Value, err error) {
	defer func() {
		c.mu.Lock()
		delete(c.loading, key)
		close(done)
		if err == nil && val != nil {
			c.insert(key, val)
		}
		c.mu.Unlock()
	}()
	return load()
}

// Peek returns the value under key without loading it, and whether there
// was one.
func (c *Cache) Peek(key string) (Value, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry).val, true
}

// Put stores val under key, replacing what was there.
func (c *Cache) Put(key string, val Value) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	c.insert(key, val)
}

// insert caches val under key and evicts what the budget cannot hold.
// Callers hold c.mu.
func (c *Cache) insert(key string, val Value) {
	size := val.CacheBytes()
	if size > c.budget {
		return
	}
	c.entries[key] = c.order.PushFront(&entry{key: key, val: val, size: size})
	c.used += size
	for c.used > c.budget && c.order.Len() > 0 {
		c.remove(c.order.Back())
	}
}

func (c *Cache) remove(el *list.Element) {
	e := el.Value.(*entry)
	c.order.Remove(el)
	delete(c.entries, e.key)
	c.used -= e.size
}

// ForgetPrefix drops every value whose key starts with prefix (the values
// of a dropped table, say).
func (c *Cache) ForgetPrefix(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if strings.HasPrefix(el.Value.(*entry).key, prefix) {
			c.remove(el)
		}
		el = next
	}
}

// Stats describes the cache's use.
type Stats struct {
	// Bytes is what the values held report; Budget the most they may.
	Bytes, Budget int64
	Entries       int
	// Hits and Misses count the calls to Get answered from memory and
	// those that loaded (or waited for a load).
	Hits, Misses int64
}

// Stats returns the cache's figures now.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Bytes: c.used, Budget: c.budget, Entries: len(c.entries), Hits: c.hits, Misses: c.misses}
}
