package plan_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/plan"
)

// BenchmarkMissingDestination runs RL6001 over a generated bundle of 4,000
// Rollouts (10% mistakes), graph loading excluded; the plans it plays out
// are memoized per graph, so after the first round this is the check of
// every committed destination (mayMiss) and of the cached plans.
func BenchmarkMissingDestination(b *testing.B) {
	const n = 4000
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: n, MistakeRate: 0.1, Seed: 7}), load.Options{})
	for b.Loop() {
		p := rules.NewPass(g, plan.MissingDestination, nil, rules.ModeCLI, rules.Globals{}, func(rules.Diagnostic) {})
		if err := plan.MissingDestination.Run(p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/rollout")
}
