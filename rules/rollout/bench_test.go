package rollout_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/rollout"
)

// BenchmarkRolloutRules runs the per-Rollout and per-step rules over a
// generated bundle of 4,000 Rollouts (10% mistakes), graph loading
// excluded: these rules keep nothing between passes, so one graph serves
// every round.
func BenchmarkRolloutRules(b *testing.B) {
	const n = 4000
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: n, MistakeRate: 0.1, Seed: 7}), load.Options{})
	rs := []*rules.Rule{rollout.SetWeightRange, rollout.StepAction, rollout.PauseDuration, rollout.Selector, rollout.SameService, rollout.RequiredServices}
	findings := 0
	for b.Loop() {
		for _, r := range rs {
			p := rules.NewPass(g, r, nil, rules.ModeCLI, rules.Globals{}, func(rules.Diagnostic) { findings++ })
			if err := r.Run(p); err != nil {
				b.Fatal(err)
			}
		}
	}
	if findings == 0 {
		b.Fatal("no findings: the corpus has mistakes")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/rollout")
}
