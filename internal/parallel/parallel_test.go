package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestForCallsEachIndexOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{0, 1, 7, 64, 1000} {
		for _, minPer := range []int{0, 1, 16} {
			calls := make([]atomic.Int32, n)
			For(n, minPer, func(i int) { calls[i].Add(1) })
			for i := range calls {
				if c := calls[i].Load(); c != 1 {
					t.Fatalf("n=%d minPerWorker=%d: index %d called %d times", n, minPer, i, c)
				}
			}
		}
	}
}

func TestForUsesSeveralGoroutines(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	// Each call waits, up to a deadline, for another call to be in flight at
	// the same time: on one goroutine none ever is.
	var inFlight, most atomic.Int32
	For(8, 1, func(int) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if m := most.Load(); n > m {
				most.CompareAndSwap(m, n)
			}
			if most.Load() >= 2 {
				return
			}
			n = inFlight.Load()
		}
	})
	if most.Load() < 2 {
		t.Fatal("no two calls ran at the same time")
	}
	// Below minPerWorker items per goroutine, the caller's goroutine does it all.
	var concurrent atomic.Int32
	For(8, 100, func(int) {
		if concurrent.Add(1) > 1 {
			t.Error("calls overlapped although n < minPerWorker")
		}
		time.Sleep(time.Millisecond)
		concurrent.Add(-1)
	})
}

func TestForWithStatePerGoroutine(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	type state struct{ calls []int }
	var states []*state
	var mu sync.Mutex
	owner := make([]*state, 1000)
	ForWith(1000, 1, func() *state {
		s := &state{}
		mu.Lock()
		states = append(states, s)
		mu.Unlock()
		return s
	}, func(s *state, i int) {
		s.calls = append(s.calls, i) // unsynchronized: only this goroutine uses s
		owner[i] = s
	})
	total := 0
	for _, s := range states {
		total += len(s.calls)
		for _, i := range s.calls {
			if owner[i] != s {
				t.Fatalf("index %d recorded by two states", i)
			}
		}
	}
	if total != 1000 || len(states) < 2 || len(states) > 4 {
		t.Errorf("%d calls over %d states, want 1000 over 2..4", total, len(states))
	}
}
