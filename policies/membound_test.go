package policies

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/internal/proccpu"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/rollout"
)

// hugeValues are policies that build values of gigabytes from a small bundle.
var hugeValues = map[string]string{
	"array":  `xs := [i | some i in numbers.range(1, 200000000)]`,
	"set":    `xs := {sprintf("%d-%d", [i, j]) | some i in numbers.range(1, 100000); some j in numbers.range(1, 1000)}`,
	"string": `xs := concat(",", [sprintf("%0100d", [i]) | some i in numbers.range(1, 50000000)])`,
}

func hugePolicy(name, build string) string {
	return strings.Replace(goodMeta, "RL9100", "RL9190", 1) + `package acme.huge_` + name + `

violation contains v if {
	some ro in input.rollouts
	` + build + `
	count(xs) == -1
	v := {"msg": "unreachable", "ref": ro.rollout, "path": "spec"}
}
`
}

// lintWithPolicies lints the RL0009 testdata with the user policies in the
// given texts, each rule configured with options, plus RL1001.
func lintWithPolicies(t *testing.T, options string, texts ...string) *analyzer.Result {
	t.Helper()
	dir := t.TempDir()
	for i, text := range texts {
		if err := os.WriteFile(dir+"/p"+string(rune('a'+i))+".rego", []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := LoadDirs([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	g, err := load.Paths([]string{"../testdata/rules/RL0009/bad.yaml"}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := "rules:\n"
	for _, r := range rs {
		cfg += "  " + r.ID + ": {options: " + options + "}\n"
	}
	c, err := parseConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return analyzer.Run(g, analyzer.Options{Rules: append(rs, rollout.SetWeightRange), Config: c, Mode: rules.ModeCLI})
}

// TestPolicyOverItsMemoryIsStopped runs each huge-value policy beside a
// well-behaved one: the huge one is stopped naming its bound, the other
// (stopped with it, since the heap cannot tell them apart, and run again
// alone) still reports, and so does the Go rule.
func TestPolicyOverItsMemoryIsStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates up to the bound")
	}
	good := goodMeta + `package acme.good

violation contains {"msg": "good policy ran", "ref": ro.rollout, "path": "spec"} if {
	some ro in input.rollouts
	some i in numbers.range(1, 300)
	some j in numbers.range(1, 300)
	i * j == 90000
}
`
	for name, build := range hugeValues {
		t.Run(name, func(t *testing.T) {
			res := lintWithPolicies(t, "{memory: 64Mi, timeout: 60s}", hugePolicy(name, build), good)
			failed := messages(res, "RL0009")
			if len(failed) != 1 || !strings.Contains(failed[0], "policy acme.huge_"+name) ||
				!strings.Contains(failed[0], "grew the heap by more than 64Mi, the memory bound") {
				t.Errorf("RL0009: %q", failed)
			}
			if got := messages(res, "RL9100"); len(got) != 1 || got[0] != "good policy ran" {
				t.Errorf("the policy beside it: %q", got)
			}
			if got := messages(res, "RL1001"); len(got) != 1 {
				t.Errorf("RL1001: %q", got)
			}
		})
	}
}

func TestMemoryOptionIsChecked(t *testing.T) {
	res := lintWithPolicies(t, "{memory: lots}", goodMeta+"package acme.p\n\nviolation contains {\"msg\": \"x\", \"ref\": ro.rollout} if some ro in input.rollouts\n")
	if got := messages(res, "RL0009"); len(got) != 1 || !strings.Contains(got[0], `option memory "lots" is not a positive quantity such as 512Mi`) {
		t.Errorf("RL0009: %q", got)
	}
}

// TestMemoryBoundKeepsTheProcessSmall lints with a policy building a
// several-gigabyte array at the default bound in a child process, and
// requires the stop to be reported and the child's peak resident memory to
// stay within what the watchdog guarantees: the heap of a stopped
// evaluation never passes twice its bound above where it started (past
// that, OnRunaway ends the process), on top of what the same lint takes
// with a policy that allocates nothing (measured in a second child). The
// watchdog samples every few milliseconds, so on a loaded machine the heap
// overshoots the bound by a varying amount; twice the bound is the limit it
// enforces. Without the bound the child grows until the evaluation's 60 s
// limit, or the machine, stops it.
func TestMemoryBoundKeepsTheProcessSmall(t *testing.T) {
	switch os.Getenv("ROLLOUTLINT_MEMBOUND_CHILD") {
	case "huge":
		res := lintWithPolicies(t, "{timeout: 60s}", hugePolicy("array", hugeValues["array"]))
		for _, m := range messages(res, "RL0009") {
			t.Log("RL0009:", m)
		}
		return
	case "small":
		lintWithPolicies(t, "{timeout: 60s}", hugePolicy("array", `xs := [i | some i in numbers.range(1, 10)]`))
		return
	}
	if testing.Short() {
		t.Skip("allocates up to the bound")
	}
	child := func(mode string) (peakBytes uint64, output string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryBoundKeepsTheProcessSmall$", "-test.v")
		cmd.Env = append(os.Environ(), "ROLLOUTLINT_MEMBOUND_CHILD="+mode, "GOMEMLIMIT=off", "GOGC=100")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s child: %v\n%s", mode, err, out.String())
		}
		peak, ok := proccpu.PeakRSS(cmd.ProcessState)
		if !ok {
			t.Skip("a child's peak resident memory is not known on this system")
		}
		t.Logf("%s child: peak resident %d MiB, %s user, %s system", mode, peak>>20, cmd.ProcessState.UserTime(), cmd.ProcessState.SystemTime())
		return peak, out.String()
	}
	base, _ := child("small")
	peak, out := child("huge")
	if !strings.Contains(out, "grew the heap by more than 256Mi, the memory bound") {
		t.Fatalf("the child did not report the bound:\n%s", out)
	}
	limit := base + 2*DefaultMemory
	if peak > limit {
		t.Errorf("peak resident memory %d MiB, want at most %d MiB (the lint alone %d MiB + twice the %d MiB bound)",
			peak>>20, limit>>20, base>>20, DefaultMemory>>20)
	}
}

// fakeHeap replaces the watchdog's heap reading and collection for a test.
func fakeHeap(t *testing.T, heap *uint64, collected func()) {
	t.Helper()
	savedRead, savedCollect := readHeap, collect
	readHeap = func() heapReading { return heapReading{objects: *heap} }
	collect = collected
	t.Cleanup(func() { readHeap, collect = savedRead, savedCollect })
}

func newWatch(base, bound uint64) *evalWatch {
	return &evalWatch{name: "policy p", base: base, bound: bound, next: base + bound, cancel: topdown.NewCancel()}
}

// TestWatchdogStopsEveryEvaluationWhenTheHeapCannotTell checks the
// decisions: garbage is collected before anything is stopped, growth past a
// bound stops every evaluation then running (each marked as not alone), a
// lone evaluation is marked alone, and an evaluation that goes on growing to
// twice its bound after the stop calls OnRunaway.
func TestWatchdogStopsEveryEvaluationWhenTheHeapCannotTell(t *testing.T) {
	var heap uint64
	gcs := 0
	garbage := uint64(0)
	fakeHeap(t, &heap, func() { gcs++; heap -= garbage; garbage = 0 })
	var w heapWatch
	a, b := newWatch(100, 50), newWatch(120, 50)
	w.evals = map[*evalWatch]struct{}{a: {}, b: {}}

	heap = 140 // under both bounds: nothing, not even a collection
	w.check()
	if gcs != 0 || a.over.Load() || b.over.Load() {
		t.Fatalf("under the bounds: %d collections, stopped %v %v", gcs, a.over.Load(), b.over.Load())
	}
	heap, garbage = 160, 15 // over a's bound, but garbage: 145 after the collection
	w.check()
	if gcs != 1 || a.over.Load() || b.over.Load() {
		t.Fatalf("garbage: %d collections, stopped %v %v", gcs, a.over.Load(), b.over.Load())
	}
	heap = 165 // over a's bound again, but within half a bound of the last look: no collection yet
	w.check()
	if gcs != 1 {
		t.Fatalf("a collection per sample near the bound: %d", gcs)
	}
	heap = 175 // live growth past a's bound: both stop
	w.check()
	if gcs != 2 || !a.over.Load() || !b.over.Load() || a.sole.Load() || b.sole.Load() {
		t.Fatalf("growth: %d collections, stopped %v %v, alone %v %v", gcs, a.over.Load(), b.over.Load(), a.sole.Load(), b.sole.Load())
	}
	if !a.cancel.Cancelled() || !b.cancel.Cancelled() {
		t.Fatal("stopped evaluations were not cancelled")
	}

	var aborted []string
	OnRunaway = func(msg string) { aborted = append(aborted, msg) }
	defer func() { OnRunaway = nil }()
	heap = 199 // a stopped evaluation still growing, under twice its bound
	w.check()
	if len(aborted) != 0 {
		t.Fatalf("aborted under twice the bound: %q", aborted)
	}
	heap = 260 // past twice a's bound (200) and b's (220)
	w.check()
	if len(aborted) != 1 || !strings.Contains(aborted[0], "policy p (memory bound 50 bytes), policy p (memory bound 50 bytes) went on allocating") {
		t.Fatalf("runaway: %q", aborted)
	}

	c := newWatch(100, 50)
	w.evals = map[*evalWatch]struct{}{c: {}}
	heap = 151
	w.check()
	if !c.over.Load() || !c.sole.Load() {
		t.Fatalf("a lone evaluation: stopped %v, alone %v", c.over.Load(), c.sole.Load())
	}
}

// TestWatchdogMeasuresFromTheLiveHeap starts an evaluation over garbage a
// previous one left: once a collection completed after the start finds a
// smaller live heap, growth is measured from that heap, so the evaluation
// is stopped at its bound above what is live, not above the garbage. A
// collection that completed before the start changes nothing.
func TestWatchdogMeasuresFromTheLiveHeap(t *testing.T) {
	r := heapReading{objects: 300, live: 40, cycles: 7}
	savedRead, savedCollect := readHeap, collect
	readHeap = func() heapReading { return r }
	collect = func() { r.objects = r.live; r.cycles++ }
	t.Cleanup(func() { readHeap, collect = savedRead, savedCollect })
	var w heapWatch
	e := newWatch(300, 50) // started over 260 of garbage
	e.cycles = 7
	w.evals = map[*evalWatch]struct{}{e: {}}

	r.objects = 110 // the collection of cycle 7 is older than the evaluation
	w.check()
	if e.base != 300 || e.over.Load() {
		t.Fatalf("rebased on a collection from before the start: base %d, stopped %v", e.base, e.over.Load())
	}
	r.live, r.cycles = 60, 8 // a collection after the start: 60 live
	w.check()
	if e.base != 60 || e.over.Load() {
		t.Fatalf("after a later collection: base %d, stopped %v", e.base, e.over.Load())
	}
	r.objects, r.live = 130, 125 // 65 above the live heap: past the bound of 50
	w.check()
	if !e.over.Load() {
		t.Fatalf("growth past the bound above the live heap was not stopped (base %d, next %d)", e.base, e.next)
	}
	r.live, r.cycles = 20, 20 // a stopped evaluation keeps its base
	w.check()
	if e.base != 60 {
		t.Fatalf("a stopped evaluation was rebased to %d", e.base)
	}
}
