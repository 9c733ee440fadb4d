package analyzer_test

import (
	"fmt"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/load"
	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
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

// BenchmarkLint measures load + graph + every rule, the whole `lint` minus output.
func BenchmarkLint(b *testing.B) {
	rs := all.Rules()
	for _, n := range []int{100, 1000, 10000} {
		inputs := corpus.Generate(corpus.Options{Rollouts: n, Seed: 1, MistakeRate: 0.05})
		objects := corpus.Objects(n)
		b.Run(fmt.Sprintf("rollouts=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g := load.Inputs(inputs, load.Options{})
				analyzer.Run(g, analyzer.Options{Rules: rs, Mode: rules.ModeCLI})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(objects), "ns/object")
		})
	}
}
