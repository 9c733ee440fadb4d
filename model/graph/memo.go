package graph

import "sync"

// Memo is a value of type T computed once per graph however many rules ask
// for it, so that work several rules share (parsing every PromQL query,
// playing out every Rollout's steps) is done once. Declare one per
// computation as a package-level variable and read it with Get:
//
//	var plans = graph.NewMemo[[]*Plan]("plan.ForGraph")
//
//	func ForGraph(g *graph.Graph) []*Plan { return plans.Get(g, func() []*Plan { return Build(g) }) }
//
// The variable itself is the key, so memos of different packages cannot
// collide and callers get a T without a type assertion.
type Memo[T any] struct{ name string }

// NewMemo returns a memo; name says what it holds, for debugging.
func NewMemo[T any](name string) *Memo[T] { return &Memo[T]{name: name} }

// Get returns the memo's value for g, calling compute the first time. Callers
// racing on the same graph wait for one computation.
func (m *Memo[T]) Get(g *Graph, compute func() T) T {
	return memoize(g, memoKey{m, nil}, compute)
}

// KeyedMemo is a Memo with one value per key of type K (for example one
// prediction per Istio version).
type KeyedMemo[K comparable, T any] struct{ name string }

// NewKeyedMemo returns a keyed memo; name says what it holds.
func NewKeyedMemo[K comparable, T any](name string) *KeyedMemo[K, T] {
	return &KeyedMemo[K, T]{name: name}
}

// Get returns the value for g and key, calling compute the first time.
func (m *KeyedMemo[K, T]) Get(g *Graph, key K, compute func() T) T {
	return memoize(g, memoKey{m, key}, compute)
}

// memoKey identifies a memo entry: the memo variable and, for a keyed memo,
// the key.
type memoKey struct {
	memo any
	sub  any
}

// memoEntry computes its value once even when rules ask concurrently.
type memoEntry struct {
	once sync.Once
	val  any
	seq  uint64 // when the entry was made (see MemoMark)
}

func memoize[T any](g *Graph, key memoKey, compute func() T) T {
	e, ok := g.memo.Load(key)
	if !ok {
		e, _ = g.memo.LoadOrStore(key, &memoEntry{seq: g.memoSeq.Add(1)})
	}
	me := e.(*memoEntry)
	me.once.Do(func() { me.val = compute() })
	return me.val.(T) // the entry was made for this memo, so of type T
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
