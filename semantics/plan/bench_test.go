package plan_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/internal/heapsize"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
)

// BenchmarkBuild plans every Rollout of a generated corpus of 1,000 Rollouts
// (half host-level, half subset-level), with their writes (ForRollout, what
// `plan` and the push rules use) and without (StatesOf, what RL6001 uses).
// Besides the allocations of building (-benchmem), it reports the heap the
// plans keep alive per Rollout, which is what a caller holding them pays.
func BenchmarkBuild(b *testing.B) {
	const n = 1000
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: n, Seed: 1}), load.Options{})
	for _, c := range []struct {
		name  string
		build func(*graph.Graph, *graph.RolloutRefs) *plan.Plan
	}{{"ForRollout", plan.ForRollout}, {"StatesOf", plan.StatesOf}} {
		b.Run(c.name, func(b *testing.B) {
			all := func() []*plan.Plan {
				var out []*plan.Plan
				for _, rr := range g.Refs().Rollouts {
					out = append(out, c.build(g, rr))
				}
				return out
			}
			kept := heapsize.Retained(func() any { return all() }) // measured first: no earlier result is alive
			var plans []*plan.Plan
			for b.Loop() {
				plans = all()
			}
			if len(plans) != n {
				b.Fatalf("got %d plans, want %d", len(plans), n)
			}
			b.ReportMetric(float64(kept)/n, "retained-B/rollout")
		})
	}
}
