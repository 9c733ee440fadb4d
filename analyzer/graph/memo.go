package graph

import "sync"

// memoEntry computes its value once even when rules ask concurrently.
type memoEntry struct {
	once sync.Once
	val  any
}

// Memo returns the value compute produces for key, computing it once per graph
// however many rules ask, so that work several rules share (for example
// parsing every PromQL query) is done once. Keys should be unexported types of
// the calling package so that packages cannot collide.
func (g *Graph) Memo(key any, compute func() any) any {
	e, _ := g.memo.LoadOrStore(key, &memoEntry{})
	me := e.(*memoEntry)
	me.once.Do(func() { me.val = compute() })
	return me.val
}
