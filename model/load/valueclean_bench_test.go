package load_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// BenchmarkSchemaCheck compares the schema walk over yaml nodes (what the
// loader runs per document today) with the walk over generic values (what the
// fast path will run) on generated corpus documents; ns/doc and allocs/doc are
// per known-kind document.
func BenchmarkSchemaCheck(b *testing.B) {
	var docs []schemaDoc
	for _, in := range corpus.Generate(corpus.Options{Rollouts: 200, Seed: 1}) {
		docs = append(docs, docsOf(in.Path, in.Data)...)
	}
	// measure runs the loop and reports its cost per document.
	measure := func(b *testing.B, loop func()) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for b.Loop() {
			loop()
		}
		runtime.ReadMemStats(&after)
		n := float64(b.N) * float64(len(docs))
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/doc")
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/doc")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/doc")
	}
	b.Run("nodes", func(b *testing.B) {
		problems := 0
		report := func(kinds.FieldProblem) { problems++ }
		measure(b, func() {
			for _, d := range docs {
				kinds.CheckGo(d.t, d.node, "", report)
				if d.spec != nil {
					kinds.CheckProto(d.spec, childOf(d.node, "spec"), "spec", report)
				}
			}
		})
		if problems != 0 {
			b.Fatal(fmt.Sprint(problems, " problems in a clean corpus"))
		}
	})
	b.Run("values", func(b *testing.B) {
		measure(b, func() {
			for _, d := range docs {
				if !d.fast() {
					b.Fatalf("%s: not clean", d.where)
				}
			}
		})
	})
}
