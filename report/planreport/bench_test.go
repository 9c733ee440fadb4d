package planreport_test

import (
	"io"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/report/planreport"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// BenchmarkWrite is what `plan` does after loading, for a generated corpus
// of 1,000 Rollouts: plan each one, predict its pushes and write it, as text
// and as JSON (Write: a window of Rollouts at a time on every CPU, written in
// order; -cpu 1 is the serial writer), and, beside it, the whole document
// assembled first and then written (Build and the format's writer). One op
// is the whole corpus.
func BenchmarkWrite(b *testing.B) {
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: 1000, Seed: 1}), load.Options{})
	m, err := xds.ForVersion(xds.DefaultVersion)
	if err != nil {
		b.Fatal(err)
	}
	sc := xds.NewScoper(g)
	for _, format := range []string{"text", "json"} {
		b.Run(format+"/stream", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n, at := plan.EachIn(g)
				if err := planreport.Write(io.Discard, format, m, sc, n, at, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(format+"/document", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := planreport.Formats[format](io.Discard, planreport.Build(m, sc, plan.Build(g), nil)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
