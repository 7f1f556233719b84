package sqlite

import (
	"container/list"
	"sync"
)

// cached is a value the memory cache can hold: it reports its size.
type cached interface {
	cacheBytes() int64
}

// memCache keeps recently used values read from table data (vector sets,
// filter columns), least recently used first out, within a byte budget.
// Values are immutable once cached: their keys name a table version.
type memCache struct {
	mu      sync.Mutex
	budget  int64
	used    int64
	order   *list.List // of *cacheEntry, most recent first
	entries map[string]*list.Element
	loading map[string]*sync.WaitGroup
}

type cacheEntry struct {
	key string
	val cached
}

func newMemCache(budget int64) *memCache {
	return &memCache{budget: budget, order: list.New(), entries: map[string]*list.Element{}, loading: map[string]*sync.WaitGroup{}}
}

// get returns the value stored under key, loading it with load once however
// many callers ask at the same time. It returns load's error, and caches
// nothing then.
func (c *memCache) get(key string, load func() (cached, error)) (cached, error) {
	for {
		c.mu.Lock()
		if el, ok := c.entries[key]; ok {
			c.order.MoveToFront(el)
			c.mu.Unlock()
			return el.Value.(*cacheEntry).val, nil
		}
		if wg, ok := c.loading[key]; ok {
			c.mu.Unlock()
			wg.Wait()
			continue
		}
		wg := &sync.WaitGroup{}
		wg.Add(1)
		c.loading[key] = wg
		c.mu.Unlock()
		val, err := load()
		c.mu.Lock()
		delete(c.loading, key)
		wg.Done()
		if err == nil {
			c.entries[key] = c.order.PushFront(&cacheEntry{key: key, val: val})
			c.used += val.cacheBytes()
			for c.used > c.budget && c.order.Len() > 1 {
				old := c.order.Back()
				e := old.Value.(*cacheEntry)
				c.order.Remove(old)
				delete(c.entries, e.key)
				c.used -= e.val.cacheBytes()
			}
		}
		c.mu.Unlock()
		return val, err
	}
}
