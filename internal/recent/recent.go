// Package recent is a bounded memo of a pure function's recent results, safe
// for concurrent use: the admission webhook lints the same few templates again
// and again, and a value computed from the same key (a query text, a
// condition) need not be computed again.
package recent

import "sync"

// Cache remembers up to size results in two generations: lookups hit either,
// results go to the newer, and when the newer holds size/2 the older is
// dropped. The bound holds, and a key used again before size/2 other keys
// were added survives (so a working set of up to size/2 keys is computed
// once). The zero value is
// not usable; call New.
type Cache[K comparable, V any] struct {
	mu       sync.Mutex
	size     int
	cur, old map[K]V
}

// New returns a cache that keeps at most size results (at least 2). It
// allocates nothing until the first result: the caches are package variables,
// and a process that never uses one (`rolloutlint version`, a lint without
// PromQL) should not pay for it. The first generation grows with use; the
// later ones, made when one filled up, are made at their full size.
func New[K comparable, V any](size int) *Cache[K, V] {
	return &Cache[K, V]{size: max(size, 2)}
}

// Get returns the result for k, calling compute (outside the lock, so
// computations run in parallel) when it is not remembered. compute must be a
// function of k alone: two goroutines may both compute the same key, and
// either result may be kept. A result is shared by every caller of the same
// key, so it must not be modified.
func (c *Cache[K, V]) Get(k K, compute func() V) V {
	c.mu.Lock()
	v, ok := c.cur[k]
	if !ok {
		if v, ok = c.old[k]; ok {
			c.putLocked(k, v) // in use: keep it past the next turn
		}
	}
	c.mu.Unlock()
	if ok {
		return v
	}
	v = compute()
	c.mu.Lock()
	c.putLocked(k, v)
	c.mu.Unlock()
	return v
}

// Len returns how many results are remembered.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.old)
}

// Has reports whether k is remembered, without counting as a use.
func (c *Cache[K, V]) Has(k K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, a := c.cur[k]
	_, b := c.old[k]
	return a || b
}

func (c *Cache[K, V]) putLocked(k K, v V) {
	if c.cur == nil {
		c.cur = map[K]V{}
	} else if len(c.cur) >= c.size/2 {
		c.old, c.cur = c.cur, make(map[K]V, c.size/2)
	}
	c.cur[k] = v
}
