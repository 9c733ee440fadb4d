package xds_test

import (
	"fmt"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// BenchmarkPlanPredict plans and predicts every Rollout of a generated corpus
// (half host-level, half subset-level): the cost `plan` and the RL6xxx rules
// add to a lint, which must grow linearly with the bundle.
func BenchmarkPlanPredict(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: n, Seed: 1}), load.Options{})
		m, _ := xds.ForVersion("")
		b.Run(fmt.Sprintf("rollouts=%d", n), func(b *testing.B) {
			for b.Loop() {
				sc := xds.NewScoper(g)
				for _, p := range plan.Build(g) {
					xds.Predict(m, sc, p)
				}
			}
		})
	}
}

// TestCorpusPlans checks that every generated Rollout gets a complete plan
// whose pushes are all classified.
func TestCorpusPlans(t *testing.T) {
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: 200, Seed: 7}), load.Options{})
	m, _ := xds.ForVersion("1.28")
	preds := xds.ForGraph(g, m)
	if len(preds) != 200 {
		t.Fatalf("got %d plans, want 200", len(preds))
	}
	for _, pr := range preds {
		if len(pr.Plan.States) < 4 {
			t.Errorf("%v: only %d states", pr.Plan.Rollout, len(pr.Plan.States))
		}
		for _, sp := range pr.Prediction.States {
			for _, x := range sp.Pushes {
				if x.Class == xds.ClassNone || len(x.Cites) == 0 {
					t.Errorf("%v: unclassified push %+v", pr.Plan.Rollout, x)
				}
			}
		}
	}
	if again := xds.ForGraph(g, m); &again[0] != &preds[0] {
		t.Error("ForGraph recomputed the prediction instead of sharing it")
	}
}
