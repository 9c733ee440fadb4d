package analysisrun

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/internal/heapsize"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// BenchmarkBuild predicts the AnalysisRuns of a generated corpus of 1,000
// Rollouts (one analysis step each, half with a runtime argument). It calls
// build, not the memoized Of, so one graph serves every round. Besides the
// allocations (-benchmem) it reports the heap the result keeps alive per
// Rollout: a lint holds it until the end.
func BenchmarkBuild(b *testing.B) {
	const n = 1000
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: n, Seed: 1}), load.Options{})
	kept := heapsize.Retained(func() any { return build(g) }) // measured first: no earlier result is alive
	var a *Analysis
	for b.Loop() {
		a = build(g)
	}
	if len(a.Runs) != n || len(a.Queries) != n {
		b.Fatalf("got %d runs and %d queries, want %d of each", len(a.Runs), len(a.Queries), n)
	}
	b.ReportMetric(float64(kept)/n, "retained-B/rollout")
}
