package analysis_test

import (
	"fmt"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/analysis"
)

var analysisRules = []*rules.Rule{
	analysis.TemplateNotFound, analysis.ArgUnresolved, analysis.ArgUndeclared, analysis.ArgConflict,
	analysis.ArgValueAndValueFrom, analysis.PromQLEmptyLabel, analysis.PromQLParse, analysis.IstioVersionLabel,
	analysis.IstioWorkload, analysis.IstioStableService, analysis.IstioSubsetMixed, analysis.MetricLimits, analysis.MetricProvider, analysis.MetricDuplicate,
	analysis.MetricIndefinite, analysis.ResultIndexUnguarded, analysis.ConditionShape,
}

// BenchmarkAnalysisRules runs every RL4xxx rule over generated bundles of
// growing size, graph loading excluded; time per Rollout should stay flat.
// Each iteration loads a fresh graph (untimed) so the shared per-graph
// analysis (PromQL substitution and parsing) is part of the measurement.
func BenchmarkAnalysisRules(b *testing.B) {
	for _, n := range []int{250, 1000, 4000} {
		inputs := corpus.Generate(corpus.Options{Rollouts: n, MistakeRate: 0.1, Seed: 7})
		b.Run(fmt.Sprintf("rollouts=%d", n), func(b *testing.B) {
			findings := 0
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				g := load.Inputs(inputs, load.Options{})
				b.StartTimer()
				for _, r := range analysisRules {
					p := rules.NewPass(g, r, nil, rules.ModeCLI, rules.Globals{}, func(rules.Diagnostic) { findings++ })
					if err := r.Run(p); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/rollout")
		})
	}
}
