package memlimit

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// The tests change the process's memory limit; each restores it.
func restore(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	gc := debug.SetGCPercent(-1)
	debug.SetGCPercent(gc)
	t.Cleanup(func() {
		debug.SetMemoryLimit(before)
		debug.SetGCPercent(gc)
		enabled.Store(false)
		fitted.Store(false)
		mu.Lock()
		loading = false // a pending watchLoad returns
		mu.Unlock()
	})
}

func TestFitOnlyWhenEnabledAndUnset(t *testing.T) {
	restore(t)
	before := debug.SetMemoryLimit(-1)
	if Fit() != 0 || debug.SetMemoryLimit(-1) != before {
		t.Fatal("Fit set a limit without Enable")
	}
	Enable()
	t.Setenv("GOMEMLIMIT", "1GiB")
	if Fit() != 0 || debug.SetMemoryLimit(-1) != before {
		t.Fatal("Fit set a limit although GOMEMLIMIT is set")
	}
}

func TestFitFollowsTheLiveHeap(t *testing.T) {
	restore(t)
	t.Setenv("GOMEMLIMIT", "") // restored after the test; unset for Fit
	if err := os.Unsetenv("GOMEMLIMIT"); err != nil {
		t.Fatal(err)
	}
	Enable()
	// A small live heap gets Default.
	runtime.GC()
	if got := Fit(); got != Default || debug.SetMemoryLimit(-1) != Default {
		t.Errorf("Fit with a small live heap set %d, want %d", got, Default)
	}
	// A live heap larger than Default/LiveFactor raises the limit.
	big := make([]byte, int(math.Ceil(Default/LiveFactor))+64<<20)
	for i := range big {
		big[i] = byte(i)
	}
	runtime.GC()
	got := Fit()
	runtime.KeepAlive(big)
	if want := int64(LiveFactor * float64(len(big))); got < want {
		t.Errorf("Fit with %d bytes live set %d, want at least %d", len(big), got, want)
	}
	if cur := debug.SetMemoryLimit(-1); cur != got {
		t.Errorf("Fit returned %d but the limit in force is %d", got, cur)
	}
}

func TestFitRaisesGOGCUnderTheLimit(t *testing.T) {
	restore(t)
	unsetEnv(t, "GOGC", "GOMEMLIMIT")
	Enable()
	Start()
	waitGOGC(t, StartupGCPercent, "after a collection while loading") // as when the loading limit is reached
	Fit()
	if p := gcPercent(); p != GCPercentUnderLimit {
		t.Fatalf("GOGC %d after Fit, want %d", p, GCPercentUnderLimit)
	}
	// Start's watch, seeing a large live heap, must not lower it again.
	big := make([]byte, 2*SmallHeap)
	for i := range big {
		big[i] = byte(i)
	}
	for range 3 {
		runtime.GC()
		time.Sleep(time.Millisecond) // the finalizer runs on its own goroutine
	}
	runtime.KeepAlive(big)
	if p := gcPercent(); p != GCPercentUnderLimit {
		t.Errorf("GOGC %d after collections with %d bytes live, want %d", p, len(big), GCPercentUnderLimit)
	}
}

func TestFitAfterALoadWithoutCollection(t *testing.T) {
	restore(t)
	unsetEnv(t, "GOGC", "GOMEMLIMIT")
	Enable()
	Start()
	// More than Default/LiveFactor, less than the loading limit: loaded
	// without a collection, the heap stands for the live heap.
	big := make([]byte, int(math.Ceil(Default/LiveFactor))+32<<20)
	for i := range big {
		big[i] = byte(i)
	}
	mu.Lock()
	whole := uncollected()
	mu.Unlock()
	if !whole {
		t.Skip("a collection ran while the test loaded")
	}
	got := Fit()
	runtime.KeepAlive(big)
	if want := int64(LiveFactor * float64(len(big))); got < want {
		t.Errorf("Fit with %d bytes loaded set %d, want at least %d", len(big), got, want)
	}
	// Until the first collection: off, under a share of the limit.
	if cur, want := debug.SetMemoryLimit(-1), int64(FirstShare*float64(got)); cur != want {
		t.Errorf("limit in force %d before a collection, want %d", cur, want)
	}
	if p := gcPercent(); p != -1 {
		t.Errorf("GOGC %d after a load without collection, want off", p)
	}
	// Then the limit Fit returned, at GCPercentUnderLimit.
	waitGOGC(t, GCPercentUnderLimit, "after the first collection since Fit")
	if cur := debug.SetMemoryLimit(-1); cur != got {
		t.Errorf("Fit returned %d but the limit in force is %d", got, cur)
	}
	// A second bundle's Fit (a repository lint) takes the live heap.
	runtime.GC()
	Fit()
	if p := gcPercent(); p != GCPercentUnderLimit {
		t.Errorf("GOGC %d after the second Fit, want %d", p, GCPercentUnderLimit)
	}
}

func TestALaterFitCancelsTheWatch(t *testing.T) {
	restore(t)
	unsetEnv(t, "GOGC", "GOMEMLIMIT")
	Enable()
	Start()
	mu.Lock()
	whole := uncollected()
	mu.Unlock()
	if !whole {
		t.Skip("a collection ran after Start")
	}
	Fit() // watches for the first collection
	fitted.Store(false)
	Start() // a later lint's Start: its loading limit must stay
	for range 3 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	// Start's own watch ended its limit at the first collection; the
	// earlier Fit's watch must not have set the limit Fit chose.
	waitGOGC(t, StartupGCPercent, "after a collection while loading")
	time.Sleep(10 * time.Millisecond)
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("limit %d after Start's watch, want none", l)
	}
}

func TestFitLeavesAChosenGOGC(t *testing.T) {
	restore(t)
	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "")
	if err := os.Unsetenv("GOMEMLIMIT"); err != nil {
		t.Fatal(err)
	}
	Enable()
	debug.SetGCPercent(100)
	Fit()
	if p := gcPercent(); p != 100 {
		t.Errorf("Fit changed GOGC to %d although GOGC is set", p)
	}
}

// gcPercent reads GOGC as in force.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestStartLoadsUnderALimit(t *testing.T) {
	restore(t)
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	unsetEnv(t, "GOGC", "GOMEMLIMIT")
	limit := debug.SetMemoryLimit(-1)
	Start() // not enabled: nothing
	Loading(1 << 30)
	if p := gcPercent(); p != 100 || debug.SetMemoryLimit(-1) != limit {
		t.Fatalf("Start without Enable set GOGC %d", p)
	}
	Enable()
	Start()
	if p, l := gcPercent(), debug.SetMemoryLimit(-1); p != -1 || l != Default {
		t.Fatalf("GOGC %d, limit %d after Start, want off under %d", p, l, Default)
	}
	// The limit follows the bundle's files up, never down.
	Loading(100 << 20)
	if l := debug.SetMemoryLimit(-1); l != LoadFactor*100<<20 {
		t.Errorf("limit %d after Loading 100 MiB, want %d", l, LoadFactor*100<<20)
	}
	Loading(1 << 20)
	if l := debug.SetMemoryLimit(-1); l != LoadFactor*100<<20 {
		t.Errorf("limit %d after Loading 1 MiB, want it kept at %d", l, LoadFactor*100<<20)
	}
	// A collection while loading ends the limit: loading goes on at the
	// startup GOGC, whatever Loading says after.
	waitGOGC(t, StartupGCPercent, "after a collection while loading")
	Loading(200 << 20)
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("limit %d after a collection while loading, want none", l)
	}
}

func TestStartUnderGOMEMLIMITLoadsAtTheDefault(t *testing.T) {
	restore(t)
	unsetEnv(t, "GOGC")
	t.Setenv("GOMEMLIMIT", "64GiB")
	Enable()
	Start()
	big := make([]byte, int(math.Ceil(Default/LiveFactor))+2*SmallHeap)
	for i := range big {
		big[i] = byte(i)
	}
	waitGOGC(t, 100, "with GOMEMLIMIT set, whatever the live heap")
	for range 3 {
		runtime.GC()
		time.Sleep(time.Millisecond) // the finalizer runs on its own goroutine
	}
	runtime.KeepAlive(big)
	if p := gcPercent(); p != 100 {
		t.Errorf("GOGC %d under GOMEMLIMIT, want 100", p)
	}
}

// waitGOGC collects until Start's watch (a finalizer, on its own goroutine)
// has set GOGC to want, or fails after 5 s.
func waitGOGC(t *testing.T, want int, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for gcPercent() != want && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if p := gcPercent(); p != want {
		t.Fatalf("GOGC %d, want %d %s", p, want, what)
	}
}

func TestStartLeavesAChosenGOGC(t *testing.T) {
	restore(t)
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	t.Setenv("GOGC", "100")
	Enable()
	Start()
	if p := gcPercent(); p != 100 {
		t.Errorf("Start changed GOGC to %d although GOGC is set", p)
	}
}

func TestHeadroomPercent(t *testing.T) {
	for _, c := range []struct {
		h, live uint64
		want    int
	}{
		{96 << 20, 32 << 20, 300},  // a small live heap: the goal is live + h
		{96 << 20, 33 << 20, 291},  // rounded up
		{96 << 20, 96 << 20, 100},  // as large as h: the default
		{96 << 20, 400 << 20, 100}, // larger: never below the default
		// Before the first collection, or nearly nothing live: the runtime's
		// minimum goal (4 MiB at GOGC=100) scaled to h, not more.
		{96 << 20, 0, 2400},
		{96 << 20, 1 << 10, 2400},
	} {
		if got := headroomPercent(c.h, c.live); got != c.want {
			t.Errorf("headroomPercent(%d, %d) = %d, want %d", c.h, c.live, got, c.want)
		}
	}
}

func TestHeadroomFollowsTheLiveHeapAndStops(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	unsetEnv(t, "GOGC")
	const h = 256 << 20
	stop := Headroom(h)
	waitFor := func(ok func(p int) bool, what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !ok(gcPercent()) && time.Now().Before(deadline) {
			runtime.GC() // the finalizer runs after the collection, on its own goroutine
			time.Sleep(time.Millisecond)
		}
		if p := gcPercent(); !ok(p) {
			t.Fatalf("GOGC %d: want %s", p, what)
		}
	}
	waitFor(func(p int) bool { return p > 300 }, "well above 100 with a small live heap")
	big := make([]byte, 2*h)
	for i := range big {
		big[i] = byte(i)
	}
	waitFor(func(p int) bool { return p == 100 }, "100 with twice the headroom live")
	runtime.KeepAlive(big)
	waitFor(func(p int) bool { return p > 300 }, "raised again once the heap is small")
	stop()
	if p := gcPercent(); p != 100 {
		t.Errorf("GOGC %d after stop, want the 100 it found", p)
	}
	runtime.GC()
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if p := gcPercent(); p != 100 {
		t.Errorf("GOGC %d: the watch went on after stop", p)
	}
}

func TestHeadroomLeavesAChosenGOGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	t.Setenv("GOGC", "100")
	stop := Headroom(1 << 30)
	defer stop()
	if p := gcPercent(); p != 100 {
		t.Errorf("Headroom changed GOGC to %d although GOGC is set", p)
	}
}

func TestStartupRaisesGOGCUntilEndStartup(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before); raised.Store(false) })
	unsetEnv(t, "GOGC")
	Startup()
	if p := gcPercent(); p != StartupGCPercent {
		t.Fatalf("after Startup GOGC is %d, want %d", p, StartupGCPercent)
	}
	EndStartup()
	if p := gcPercent(); p != 100 {
		t.Fatalf("after EndStartup GOGC is %d, want 100", p)
	}
}

func TestStartupLeavesAChosenGOGC(t *testing.T) {
	before := debug.SetGCPercent(50)
	t.Cleanup(func() { debug.SetGCPercent(before); raised.Store(false) })
	t.Setenv("GOGC", "50")
	Startup()
	EndStartup()
	if p := gcPercent(); p != 50 {
		t.Errorf("Startup and EndStartup changed GOGC to %d although GOGC is set", p)
	}
}

// unsetEnv unsets the variables for the test, restoring them after it.
func unsetEnv(t *testing.T, vars ...string) {
	t.Helper()
	for _, v := range vars {
		t.Setenv(v, "")
		if err := os.Unsetenv(v); err != nil {
			t.Fatal(err)
		}
	}
}
