package graph

import "sync"

// memo holds values derived from a graph (a rollout plan, a push prediction)
// so that several rules share one computation.
type memo struct {
	mu     sync.Mutex
	values map[any]*memoEntry
}

type memoEntry struct {
	once sync.Once
	v    any
}

// Memo returns the value stored under key, computing it with build on first
// use. Rules run concurrently: build runs once per key and graph. Keys should
// be values of an unexported type of the calling package, as with context keys.
func (g *Graph) Memo(key any, build func() any) any {
	g.memo.mu.Lock()
	if g.memo.values == nil {
		g.memo.values = map[any]*memoEntry{}
	}
	e, ok := g.memo.values[key]
	if !ok {
		e = &memoEntry{}
		g.memo.values[key] = e
	}
	g.memo.mu.Unlock()
	e.once.Do(func() { e.v = build() })
	return e.v
}
