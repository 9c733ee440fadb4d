package analyzer_test

import (
	"fmt"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// BenchmarkLoad measures reading and decoding a generated bundle; ns/object
// should stay flat as the bundle grows.
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		inputs := corpus.Generate(corpus.Options{Rollouts: n, Seed: 1})
		objects := corpus.Objects(n)
		b.Run(fmt.Sprintf("rollouts=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				load.Inputs(inputs, load.Options{})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(objects), "ns/object")
		})
	}
}

// The whole lint (load, graph and every rule) is measured by
// rules/all.BenchmarkLintScale, which needs the full rule registry.

// BenchmarkGraph measures building the graph (indexes and every resolved
// reference) over already-loaded resources.
func BenchmarkGraph(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: n, Seed: 1}), load.Options{})
		objects := len(g.Resources)
		b.Run(fmt.Sprintf("rollouts=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				graph.New(g.DefaultNamespace, g.Resources, g.Files, g.Problems)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(objects), "ns/object")
		})
	}
}
