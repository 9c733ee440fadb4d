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
	"math"
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
// LiveFactor times the live heap when that is more. When loading ran without
// a collection (Start) the heap stands for the live heap, and the rules run
// with GOGC off under the limit; else the live heap is the last collection's
// (measured again first if that was long before), and the rules run at
// GCPercentUnderLimit (unless GOGC is set): the limit, not GOGC, bounds their
// heap either way. It does nothing, and returns 0, unless Enable was called
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
	_, gogcSet := os.LookupEnv("GOGC")
	limit := int64(Default)
	whole := uncollected()
	loading = false
	calls++
	seq := calls
	if whole {
		// Loading ran without a collection (see Start): its heap is nearly
		// all live (loading keeps what it allocates), and a collection now
		// would only measure what is known to within that garbage. The
		// heap stands for the live one, and the limit bounds the rules: a
		// GOGC goal would be reckoned from the mark before loading, and
		// collect the whole bundle at once.
		limit = max(limit, int64(LiveFactor*float64(heapObjects())))
		// Until the first collection the limit is FirstShare of it: GOGC's
		// pacer, knowing the heap from a collection, starts one about
		// that far before its goal, and without one the limit alone would
		// let the heap grow to it (a plan, which makes garbage, peaked
		// 40-50 MB higher). watchFit then sets the limit and
		// GCPercentUnderLimit.
		debug.SetMemoryLimit(int64(FirstShare * float64(limit)))
		debug.SetGCPercent(-1)
		watchFit(limit, gcCycles(), seq)
		return limit
	}
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
	if !gogcSet {
		debug.SetGCPercent(GCPercentUnderLimit)
	}
	return limit
}

// FirstShare is the share of its limit at which a lint whose loading ran
// without a collection collects first (see Fit).
const FirstShare = 0.9

// watchFit sets the limit and GCPercentUnderLimit after the first collection
// since cycles, unless Start or Fit ran again since (seq, the value of calls
// when this one did).
func watchFit(limit int64, cycles, seq uint64) {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		mu.Lock()
		defer mu.Unlock()
		if calls != seq {
			return // a later Fit or Start
		}
		if gcCycles() == cycles {
			watchFit(limit, cycles, seq) // a collection that began before Fit
			return
		}
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(GCPercentUnderLimit)
	})
}

// calls counts the calls of Start and Fit, under mu: a watch set by one
// does nothing after the next.
var calls uint64

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

// Start lets a lint load without a collection: loading keeps nearly
// everything it allocates (the file bytes, the typed objects, the graph), so
// a collection while it runs marks all that is loaded so far and frees
// little. Loading runs with GOGC off under a loading limit, Default or
// LoadFactor times the bundle's file bytes (Loading); should the heap reach
// it, the first collection ends it and loading goes on at StartupGCPercent
// (watchLoad). Fit then sets the limit the rules run under. Under a GOMEMLIMIT
// the user set, which Fit leaves alone, loading runs at StartupGCPercent and
// the collector returns to the default (100) once a collection finds more
// than SmallHeap live (see watchHeap). It does nothing unless Enable was
// called and GOGC is unset.
//
// Until round 5 of issue 21 every bundle went back to the default past
// SmallHeap; loading at StartupGCPercent took the 50,000-object corpora 5-9 %
// less CPU. Until round 8 it loaded at StartupGCPercent, which still
// collected at 16 MB and at five times that (mixed: two collections, the
// second marking 69 MB for 8 MB freed; 250,000 objects: three, then Fit's
// measuring one of 683 MB, 1.2 s of its 6.4 s CPU).
func Start() {
	if !enabled.Load() {
		return
	}
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		debug.SetGCPercent(StartupGCPercent)
		watchHeap()
		return
	}
	mu.Lock()
	defer mu.Unlock()
	startCycles = gcCycles()
	loading = true
	calls++
	loadLimit = Default
	debug.SetMemoryLimit(loadLimit)
	debug.SetGCPercent(-1)
	watchLoad()
}

// Loading tells Start's loading limit how many bytes of files the bundle
// being loaded holds: the limit becomes LoadFactor times that when more than
// Default, so that a large bundle loads without a collection too. It does
// nothing once a collection ran or Fit was called.
func Loading(fileBytes int64) {
	if !enabled.Load() {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if !loading || fitted.Load() {
		return
	}
	if l := LoadFactor * fileBytes; l > loadLimit {
		loadLimit = l
		debug.SetMemoryLimit(loadLimit)
	}
}

// LoadFactor is how many times its files' bytes a bundle may take while
// loading before a collection: loading leaves about 5.5-7 times the file
// bytes on the heap (the files, the typed objects, the graph; 36 MB of files
// about 190 MB, 107 MB about 740 MB), so this is room for that and the
// little garbage loading makes, while a bundle that makes much more (the
// yaml.v3 path on a large input) is collected at a bound of its size.
const LoadFactor = 12

// Start's loading state, under mu: whether the loading limit is in force,
// what it is, and the collections counted when it was set.
var (
	loading     bool
	loadLimit   int64
	startCycles uint64
)

// uncollected reports, under mu, whether Start put loading under its limit
// and no collection has run since.
func uncollected() bool { return loading && gcCycles() == startCycles }

// gcCycles is the number of collections the process has completed.
func gcCycles() uint64 { return readBytes("/gc/cycles/total:gc-cycles") }

// watchLoad ends the loading limit at the first collection before Fit: the
// heap reached it, so the bundle is larger than its files told or loading
// makes garbage, and it goes on as it did before the limit: at
// StartupGCPercent with no limit until Fit sets one from the live heap.
func watchLoad() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		mu.Lock()
		defer mu.Unlock()
		if fitted.Load() || !loading {
			return
		}
		if gcCycles() == startCycles {
			watchLoad() // a collection that began before Start
			return
		}
		loading = false
		debug.SetGCPercent(StartupGCPercent)
		debug.SetMemoryLimit(math.MaxInt64)
	})
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
