package memlimit

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
)

// minHeap is the Go runtime's smallest heap goal at GOGC=100 (4 MiB): the
// goal never falls below minHeap·GOGC/100, so a GOGC computed from a live
// heap smaller than this (or none yet: before the first collection) would
// let the heap grow far past live + headroom.
const minHeap = 4 << 20

// headroomGen identifies the Headroom watch in force; stopping one (or
// starting another) ends the previous watch at its next collection.
var headroomGen atomic.Int64

// Headroom keeps at least h bytes between the live heap and the collector's
// goal: after each collection GOGC becomes max(100, 100·h/live), live counted
// as at least the runtime's 4 MiB minimum heap. A server
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
// least the default 100. A live heap under minHeap counts as minHeap, so
// that the runtime's minimum goal is at most h too.
func headroomPercent(h, live uint64) int {
	live = max(live, minHeap)
	return max(100, int((h*100+live-1)/live))
}
