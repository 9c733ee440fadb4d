package analysisrun_test

import (
	"runtime"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer/analysisrun"
	"github.com/rolloutlint/rolloutlint/analyzer/load"
	"github.com/rolloutlint/rolloutlint/internal/corpus"
)

// BenchmarkOf predicts the AnalysisRuns of a generated corpus of 1,000
// Rollouts (one analysis step each, half with a runtime argument), on a fresh
// graph each round since Of is memoized. Besides the allocations (-benchmem)
// it reports the heap the result keeps alive per Rollout: a lint holds it
// until the end.
func BenchmarkOf(b *testing.B) {
	const n = 1000
	inputs := corpus.Generate(corpus.Options{Rollouts: n, Seed: 1})
	var a *analysisrun.Analysis
	for b.Loop() {
		b.StopTimer()
		g := load.Inputs(inputs, load.Options{})
		b.StartTimer()
		a = analysisrun.Of(g)
	}
	if len(a.Runs) != n || len(a.Queries) != n {
		b.Fatalf("got %d runs and %d queries, want %d of each", len(a.Runs), len(a.Queries), n)
	}
	g := load.Inputs(inputs, load.Options{})
	a = nil
	before := liveHeap()
	a = analysisrun.Of(g)
	after := liveHeap()
	runtime.KeepAlive(a)
	runtime.KeepAlive(g)
	b.ReportMetric(float64(after-before)/n, "retained-B/rollout")
}

// liveHeap is the heap in use after a full collection.
func liveHeap() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
