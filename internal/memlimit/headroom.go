package memlimit

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
)

// maxHeadroomPercent caps the GOGC Headroom sets on a nearly empty heap.
const maxHeadroomPercent = 10000

// headroomGen identifies the Headroom watch in force; stopping one (or
// starting another) ends the previous watch at its next collection.
var headroomGen atomic.Int64

// Headroom keeps at least h bytes between the live heap and the collector's
// goal: after each collection GOGC becomes max(100, 100·h/live). A server
// whose live heap is small (the webhook: a cluster view of tens of MB and the
// compiled policies) then collects once per h bytes allocated instead of once
// per live heap — fewer collections whose marking slows the requests that
// meet it — and one whose live heap is larger than h collects as at the
// default. The soft memory limit (GOMEMLIMIT) still bounds the total. It does
// nothing when GOGC is set. stop ends the watch and restores the GOGC it
// found.
func Headroom(h uint64) (stop func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	gen := headroomGen.Add(1)
	prev := debug.SetGCPercent(headroomPercent(h, liveHeap()))
	var watch func()
	watch = func() {
		runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
			if headroomGen.Load() != gen {
				return
			}
			debug.SetGCPercent(headroomPercent(h, liveHeap()))
			watch()
		})
	}
	watch()
	return func() {
		if headroomGen.CompareAndSwap(gen, gen+1) {
			debug.SetGCPercent(prev)
		}
	}
}

// headroomPercent is the GOGC that puts the goal h bytes above live, at
// least the default 100.
func headroomPercent(h, live uint64) int {
	if live == 0 || h/live >= maxHeadroomPercent/100 {
		return maxHeadroomPercent
	}
	return max(100, int((h*100+live-1)/live))
}
