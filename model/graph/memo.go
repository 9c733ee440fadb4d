package graph

import "sync"

// memoEntry computes its value once even when rules ask concurrently.
type memoEntry struct {
	once sync.Once
	val  any
	seq  uint64 // when the entry was made (see MemoMark)
}

// Memo returns the value compute produces for key, computing it once per graph
// however many rules ask, so that work several rules share (for example
// parsing every PromQL query) is done once. Keys should be unexported types of
// the calling package so that packages cannot collide.
func (g *Graph) Memo(key any, compute func() any) any {
	e, ok := g.memo.Load(key)
	if !ok {
		e, _ = g.memo.LoadOrStore(key, &memoEntry{seq: g.memoSeq.Add(1)})
	}
	me := e.(*memoEntry)
	me.once.Do(func() { me.val = compute() })
	return me.val
}

// MemoMark returns a mark for ForgetMemosSince: the memos made after it.
func (g *Graph) MemoMark() uint64 { return g.memoSeq.Load() }

// ForgetMemosSince drops the values memoized after mark, so that the memory
// of work no remaining reader needs can be reclaimed while the graph lives on
// (the analyzer calls it between its stages). A value asked for again is
// computed again; a caller still holding a value keeps it.
func (g *Graph) ForgetMemosSince(mark uint64) {
	g.memo.Range(func(k, e any) bool {
		if e.(*memoEntry).seq > mark {
			g.memo.Delete(k)
		}
		return true
	})
}
