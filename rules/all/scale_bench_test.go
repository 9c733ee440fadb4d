//go:build unix

package all_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/internal/heapsize"
	"github.com/rolloutlint/rolloutlint/internal/proccpu"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// BenchmarkLintScale lints generated bundles of growing size and reports the
// cost per object, which must stay flat: a quadratic rule or a per-object
// rescan shows up as ns/object growing with the bundle. "lint" is load, graph
// and every rule; "rules-only" runs the rules over a graph built once.
// Besides wall time it reports process CPU time per object (all threads,
// GC included), which is steadier on a shared machine.
func BenchmarkLintScale(b *testing.B) {
	rs := all.Rules()
	for _, n := range []int{100, 1000, 10000} {
		inputs := corpus.Generate(corpus.Options{Rollouts: n, MistakeRate: 0.05, Seed: 1})
		objects := corpus.Objects(n)
		b.Run(fmt.Sprintf("lint/rollouts=%d", n), func(b *testing.B) {
			measure(b, objects, func() {
				g := load.Inputs(inputs, load.Options{})
				if len(g.Resources) != objects {
					b.Fatalf("loaded %d objects, want %d", len(g.Resources), objects)
				}
				lintOnce(b, g, rs)
			})
			// What a lint keeps live at its end — the graph with the Rego
			// input, the largest the heap gets — is what its peak memory
			// follows (about twice it, or the soft limit).
			live := heapsize.Retained(func() any {
				g := load.Inputs(inputs, load.Options{})
				lintOnce(b, g, rs)
				return g
			})
			b.ReportMetric(float64(live)/float64(objects), "live-B/object")
		})
		g := load.Inputs(inputs, load.Options{})
		runtime.GC() // collect the loader's garbage now, not while timing the rules
		b.Run(fmt.Sprintf("rules-only/rollouts=%d", n), func(b *testing.B) {
			measure(b, objects, func() { lintOnce(b, g, rs) })
		})
	}
}

func lintOnce(b *testing.B, g *graph.Graph, rs []*rules.Rule) {
	res := analyzer.Run(g, analyzer.Options{Rules: rs, Mode: rules.ModeCLI})
	if res.Summary.Errors == 0 {
		b.Fatal("the corpus's mistakes were not found")
	}
}

// measure runs fn in the benchmark loop and reports wall time, CPU time and
// heap allocations per object. Allocations do not depend on the machine's
// load, so they are the steadiest sign of linear work.
func measure(b *testing.B, objects int, fn func()) {
	var wall, cpu time.Duration
	var mallocs uint64
	var ms runtime.MemStats
	for b.Loop() {
		runtime.ReadMemStats(&ms)
		m0 := ms.Mallocs
		c0 := proccpu.Self()
		start := time.Now()
		fn()
		wall += time.Since(start)
		cpu += proccpu.Self() - c0
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - m0
	}
	per := float64(b.N) * float64(objects)
	b.ReportMetric(float64(wall.Nanoseconds())/per, "ns/object")
	b.ReportMetric(float64(cpu.Nanoseconds())/per, "cpu-ns/object")
	b.ReportMetric(float64(mallocs)/per, "allocs/object")
}

// BenchmarkRuleFamilies runs each theme's rules (RL0xxx … RL6xxx, opt-in ones
// included) alone over a fresh graph of 1,000 Rollouts, so a slow family shows
// by itself. The graph is rebuilt outside the timer each round because rules
// share work through the graph's memo.
func BenchmarkRuleFamilies(b *testing.B) {
	inputs := corpus.Generate(corpus.Options{Rollouts: 1000, MistakeRate: 0.05, Seed: 1})
	objects := corpus.Objects(1000)
	all := all.Rules()
	for _, family := range []string{"RL0", "RL1", "RL2", "RL3", "RL4", "RL5", "RL6"} {
		var rs []*rules.Rule
		for _, r := range all {
			if r.ID[:3] == family {
				rs = append(rs, r)
			}
		}
		b.Run(family+"xxx", func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				g := load.Inputs(inputs, load.Options{})
				runtime.GC()
				b.StartTimer()
				c0 := proccpu.Self()
				analyzer.Run(g, analyzer.Options{Rules: rs, Mode: rules.ModeCLI, Enable: []string{family + "*"}})
				cpu += proccpu.Self() - c0
			}
			per := float64(b.N) * float64(objects)
			b.ReportMetric(float64(cpu.Nanoseconds())/per, "cpu-ns/object")
		})
	}
}
