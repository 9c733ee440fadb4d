// Package memlimit sets the soft memory limit a lint runs under. A lint holds
// the whole bundle in memory (the files, the typed objects, the graph, the
// Rego input), and Go's collector by default lets the heap grow to twice what
// is live: on a 50,000-object bundle that is the difference between about 380
// and 450 MB. A soft limit makes the collector work harder only when the heap
// nears it, so small bundles never notice it.
//
// The limit is the Go runtime's (runtime/debug.SetMemoryLimit): soft, so a
// bundle whose live data needs more still completes, and never set when the
// user has chosen one with GOMEMLIMIT.
package memlimit

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Default is the soft limit of a lint, in bytes: low enough that a lint of
// 50,000 objects stays under 400 MB resident (the binary's own mapped pages,
// about 45 MB, come on top of the Go memory the limit counts), high enough
// that smaller bundles never reach it. (448 MiB bought no CPU over this and
// took the 50,000-object corpora to 410-475 MB.)
const Default = 384 << 20

// LiveFactor is how many times the live heap after loading the limit allows
// at least: the rules and the Rego input add about three quarters to what
// loading leaves live, and the collector needs room above that, or it would
// run back to back on bundles larger than Default was chosen for.
const LiveFactor = 2.5

// enabled is set by Enable: the limit is for the rolloutlint command, not for
// a program (or test) that calls its packages.
var enabled atomic.Bool

// Enable lets Fit set the limit. The command calls it once at start.
func Enable() { enabled.Store(true) }

// Fit sets the soft memory limit for the bundle just loaded: Default, or
// LiveFactor times the live heap when that is more. Under that limit the
// rules run at GCPercentUnderLimit (unless GOGC is set): the limit, not GOGC,
// bounds their heap. It does nothing, and returns 0, unless Enable was called
// and GOMEMLIMIT is unset; else it returns the limit it set.
func Fit() int64 {
	if !enabled.Load() {
		return 0
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return 0
	}
	mu.Lock()
	defer mu.Unlock()
	fitted.Store(true) // ends Start's watch
	limit := int64(Default)
	if live := liveHeap(); LiveFactor*float64(live) > float64(limit) {
		// The last collection may have run long before loading ended (a
		// large bundle loads at StartupGCPercent), or while loading still
		// held its scratch data: unless it found nearly all of the heap
		// live, measure again after a full collection before raising the
		// limit (a large bundle pays one early collection).
		if float64(live) < recentLive*float64(heapObjects()) {
			runtime.GC()
			live = liveHeap()
		}
		limit = max(limit, int64(LiveFactor*float64(live)))
	}
	debug.SetMemoryLimit(limit)
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(GCPercentUnderLimit)
	}
	return limit
}

// recentLive is the share of the heap the last collection must have found
// live for Fit to take it as the live heap after loading: at most a ninth
// more was allocated since, so a full collection to measure again would mark
// nearly the same heap a second time.
const recentLive = 0.9

// GCPercentUnderLimit is GOGC once Fit has set the limit. Nearly everything
// the rules and the Rego input allocate stays live until they are done, so a
// collection at every doubling of the heap frees little: at the default of
// 100 under a 340 MiB limit, a 50,000-object lint spent about a sixth of its
// CPU collecting. At 400 the heap grows to the limit instead, and the limit
// follows the bundle (LiveFactor), so a large one collects as often as before.
const GCPercentUnderLimit = 400

// fitted is set when Fit has set the limit and GOGC for the rules: Start's
// watch must not change them again.
var fitted atomic.Bool

// mu orders Start's watch (a finalizer, on its own goroutine) and Fit, so that
// a watch that began before Fit cannot overwrite the limit Fit sets.
var mu sync.Mutex

// liveHeap is the heap the last collection found live, in bytes.
func liveHeap() uint64 { return readBytes("/gc/heap/live:bytes") }

// heapObjects is what the heap's objects occupy now, live or not yet freed:
// at least the live heap.
func heapObjects() uint64 { return readBytes("/memory/classes/heap/objects:bytes") }

// readBytes reads one of the runtime's byte metrics; 0 if it is unknown.
func readBytes(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// SmallHeap is the live heap under which a lint runs with StartupGCPercent:
// the size of a pre-commit run's whole heap, far below any bundle the soft
// limit is for.
const SmallHeap = 24 << 20

// StartupGCPercent is the collector's GOGC while the live heap is small. A
// small lint (a few files: the pre-commit case) is over in tens of
// milliseconds, and at the default of 100 it spends about a tenth of its CPU
// in collections that free little (the heap is mostly the compiled policies
// and the registries built at start).
const StartupGCPercent = 400

// Start lets a lint load at StartupGCPercent: loading keeps nearly everything
// it allocates, so a collection while it runs marks all that is loaded so far
// and frees little, and Fit sets the limit the rules run under once it is
// done. Under a GOMEMLIMIT the user set, which Fit leaves alone, the collector
// returns to the default (100) once a collection finds more than SmallHeap
// live (see watchHeap). It does nothing unless Enable was called and GOGC is
// unset.
//
// Until 2026-12-02 every bundle went back to the default past SmallHeap, and
// only one sure to get a limit of its own (LiveFactor times its live heap
// above Default) loaded at StartupGCPercent. Measured side by side then, loading
// at StartupGCPercent took the 50,000-object corpora 5-9 % less CPU (two
// collections fewer), peak RSS 350 instead of 382 MB on one and the same on
// the other, and a 75,000-object bundle 5 % less CPU and 416 instead of 510 MB;
// 25,000, 35,000, 110,000 and 250,000 objects were unchanged.
func Start() {
	if !enabled.Load() {
		return
	}
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(StartupGCPercent)
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		watchHeap()
	}
}

// raised is set when Startup raised GOGC.
var raised atomic.Bool

// Startup sets GOGC to StartupGCPercent, unless GOGC is set, for the package
// initialisation of the command (package earlygc calls it from its init):
// every run of the command starts that way, and a lint or plan goes on with
// Start, which watches the live heap. A long-running command (the webhook
// server) calls EndStartup. A program that does not import earlygc never
// runs it.
func Startup() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(StartupGCPercent)
	raised.Store(true)
}

// EndStartup restores the default GOGC when Startup raised it: for a command
// that runs long or grows its heap without Start's watch (the webhook).
func EndStartup() {
	if raised.Load() {
		debug.SetGCPercent(100)
	}
}

// sentinel is garbage whose finalizer runs after each collection (it holds a
// pointer, so it is not placed in the tiny allocator, whose objects may never
// be finalized).
type sentinel struct{ _ *int }

// watchHeap follows each collection until Fit, under a GOMEMLIMIT the user
// set: past SmallHeap live it restores the default GOGC and stops, so that
// the user's limit, not a raised GOGC, shapes the heap of a bundle of any
// size.
func watchHeap() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		mu.Lock()
		defer mu.Unlock()
		if fitted.Load() {
			return
		}
		if liveHeap() > SmallHeap {
			debug.SetGCPercent(100)
			return
		}
		watchHeap()
	})
}
