// Package parallel runs independent pieces of one computation on every CPU.
package parallel

import (
	"runtime"
	"sync"
)

// For calls fn(i) for every i in [0, n), on up to GOMAXPROCS goroutines, and
// returns when all calls have. The calls must be independent; a caller that
// needs its results in order stores them by index. Work of fewer than
// minPerWorker items per goroutine is not worth a goroutine, so small n runs
// on the caller's goroutine alone.
func For(n, minPerWorker int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/max(minPerWorker, 1))
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				fn(i)
			}
		})
	}
	wg.Wait()
}
