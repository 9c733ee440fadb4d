package policies

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/topdown"
)

// DefaultMemory bounds how much one policy evaluation may grow the heap, in
// bytes. The built-in policies grow it by well under a megabyte on a
// 5,500-object bundle; a policy that builds a value this large is stopped
// and reported as RL0009 naming the bound. The rule option `memory` (a
// Kubernetes quantity such as 512Mi) overrides it per rule.
const DefaultMemory = 256 << 20

// OnRunaway is called, when set, if an evaluation stopped for its memory
// goes on allocating until the heap is twice its bound above where it
// started: OPA checks for cancellation between evaluation steps and inside
// its long loops, but not within every single built-in call, so one call can
// go on allocating after the stop. The command sets it to print msg and exit;
// without it the evaluation is left to finish its call.
var OnRunaway func(msg string)

// sampleEvery is how often the watchdog reads the heap while evaluations run.
const sampleEvery = 5 * time.Millisecond

// Go has no per-goroutine heap accounting, so the watchdog reads the
// process heap (runtime/metrics, live and not yet swept objects) while
// policy evaluations run. When the heap is more than an evaluation's bound
// above what it was when that evaluation started, it collects garbage and,
// if the heap is still over, cancels every evaluation then running (any of
// them may be the one that grows it: evaluations run in parallel, within a
// lint and across webhook requests). Each cancelled evaluation is run again
// alone (soloEval), where the heap can be attributed to it: it either
// finishes, and its findings stand, or is stopped again and reported.
var (
	watch    heapWatch
	soloEval sync.RWMutex // evaluations hold it shared; a re-run alone holds it exclusively
)

// evalWatch is one evaluation under the watchdog.
type evalWatch struct {
	name string // "policy acme.x (file:line)", for OnRunaway
	// base is the heap the evaluation's growth is measured from: the heap
	// when it started, lowered to the live heap a later collection found
	// (the heap at the start counts garbage not yet collected, which a
	// previous evaluation may have left by the hundred megabytes).
	base uint64
	// cycles is the number of completed collections when it started.
	cycles uint64
	bound  uint64
	cancel topdown.Cancel
	over   atomic.Bool // cancelled because the heap passed a bound
	// sole is set when it was the only evaluation running when cancelled:
	// the memory was its own, and it need not run again alone.
	sole atomic.Bool
	// next is the heap at which the watchdog collects garbage and looks
	// again (guarded by heapWatch.mu).
	next uint64
}

type heapWatch struct {
	mu    sync.Mutex
	evals map[*evalWatch]struct{}
	stop  chan struct{}
	// aborted is set once OnRunaway was called.
	aborted bool
}

// add starts watching e, and the watchdog with the first evaluation.
func (w *heapWatch) add(e *evalWatch) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.evals == nil {
		w.evals = map[*evalWatch]struct{}{}
	}
	if len(w.evals) == 0 {
		w.stop = make(chan struct{})
		go w.loop(w.stop)
	}
	w.evals[e] = struct{}{}
}

// remove stops watching e, and the watchdog with the last evaluation.
func (w *heapWatch) remove(e *evalWatch) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.evals, e)
	if len(w.evals) == 0 && w.stop != nil {
		close(w.stop)
		w.stop = nil
	}
}

func (w *heapWatch) loop(stop chan struct{}) {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			w.check()
		}
	}
}

// check compares the heap with every evaluation's bound.
func (w *heapWatch) check() {
	r := readHeap()
	w.rebase(r)
	if !w.needsLook(r.objects) {
		return
	}
	// The heap counts garbage not yet collected: collect it before
	// stopping anything, so that only what evaluations keep counts.
	collect()
	r = readHeap()
	w.rebase(r)
	heap := r.objects
	w.mu.Lock()
	defer w.mu.Unlock()
	over := false
	for e := range w.evals {
		over = over || !e.over.Load() && heap > e.base+e.bound
	}
	var runaway []string
	for e := range w.evals {
		switch {
		case over && !e.over.Load():
			e.sole.Store(len(w.evals) == 1)
			e.over.Store(true)
			e.cancel.Cancel()
			e.next = e.base + 2*e.bound
		case e.over.Load() && heap > e.base+2*e.bound:
			runaway = append(runaway, fmt.Sprintf("%s (memory bound %s)", e.name, formatBytes(e.bound)))
		default:
			// Garbage, not growth: look again once another half of the
			// bound is allocated, or at the bound, whichever is later. Near
			// the bound that is a collection per bound/2 allocated, not one
			// per sample, and the heap overshoots the bound by at most half.
			limit := e.base + e.bound
			if e.over.Load() {
				limit += e.bound
			}
			e.next = max(limit, heap+e.bound/2)
		}
	}
	if len(runaway) > 0 && OnRunaway != nil && !w.aborted {
		w.aborted = true
		sort.Strings(runaway)
		OnRunaway(fmt.Sprintf("%s went on allocating after it was stopped for its memory (the heap grew to %s); stopping the process",
			strings.Join(runaway, ", "), formatBytes(heap)))
	}
}

// rebase lowers the base of every running evaluation to the live heap of
// a collection that completed after it started. That heap holds all the
// evaluation has kept and none of the garbage its starting heap counted, so
// the growth measured from it is never more than the evaluation's own and
// the stop comes no later than from the starting heap. Without it, an
// evaluation started over 200 MB of garbage could grow by 200 MB more than
// its bound before being looked at.
func (w *heapWatch) rebase(r heapReading) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for e := range w.evals {
		if e.over.Load() || r.cycles <= e.cycles || r.live >= e.base {
			continue
		}
		e.base = r.live
		e.next = min(e.next, e.base+e.bound)
	}
}

// needsLook reports whether the heap has reached the level at which an
// evaluation's memory is to be checked again.
func (w *heapWatch) needsLook(heap uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for e := range w.evals {
		if heap > e.next {
			return true
		}
	}
	return false
}

// heapReading is what the watchdog reads of the heap.
type heapReading struct {
	objects uint64 // live and not yet swept objects, now
	live    uint64 // live objects the last completed collection marked
	cycles  uint64 // completed collections
}

// readHeap reads the heap; tests replace it.
var readHeap = readRuntimeHeap

// collect collects garbage before the watchdog looks again; tests replace it.
var collect = runtime.GC

// readRuntimeHeap reads the heap from runtime/metrics: the memory the
// heap's objects occupy (live ones and those not yet swept), the live heap
// the last collection found, and how many collections completed.
func readRuntimeHeap() heapReading {
	s := [3]metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	metrics.Read(s[:])
	var v [3]uint64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = s[i].Value.Uint64()
		}
	}
	if v[1] == 0 {
		// Without the live heap (a runtime that lacks the metric) never
		// rebase: the starting heap is the conservative measure.
		v[2] = 0
	}
	return heapReading{objects: v[0], live: v[1], cycles: v[2]}
}

// formatBytes prints a bound as the rule option would write it.
func formatBytes(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGi", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMi", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMi", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKi", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
