// Package parallel runs independent pieces of one computation on every CPU.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls fn(i) for every i in [0, n), on up to GOMAXPROCS goroutines, and
// returns when all calls have. The calls must be independent; a caller that
// needs its results in order stores them by index. Work of fewer than
// minPerWorker items per goroutine is not worth a goroutine, so small n runs
// on the caller's goroutine alone.
func For(n, minPerWorker int, fn func(i int)) {
	ForWith(n, minPerWorker, func() struct{} { return struct{}{} }, func(_ struct{}, i int) { fn(i) })
}

// ForWith is For with a state per goroutine, made by newState, for what the
// calls of one goroutine share and must not share with the others (a
// scratch buffer, an intern table). Goroutines claim the next index as they
// finish one, so items of uneven cost (documents, Rollouts) keep every
// goroutine busy to the end.
func ForWith[S any](n, minPerWorker int, newState func() S, fn func(s S, i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/max(minPerWorker, 1))
	if workers <= 1 {
		s := newState()
		for i := range n {
			fn(s, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			s := newState()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(s, i)
			}
		})
	}
	wg.Wait()
}
