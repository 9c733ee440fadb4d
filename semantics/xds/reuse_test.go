package xds_test

import (
	"reflect"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// TestPlannerPredictorMatchFresh plans and predicts Rollout after Rollout
// in one Planner and one Predictor, as `plan` does, and compares each plan
// and prediction with ForRollout's and Predict's, made in memory of their
// own: reusing the previous Rollout's memory must change nothing.
func TestPlannerPredictorMatchFresh(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 40
	}
	for _, o := range []corpus.Options{
		{Rollouts: n, Seed: 11},
		{Rollouts: n, Seed: 12, MistakeRate: 0.3},
		{Rollouts: n / 2, Seed: 13, Profile: corpus.Gateways, MistakeRate: 0.1},
	} {
		g := load.Inputs(corpus.Generate(o), load.Options{})
		sc := xds.NewScoper(g)
		for _, v := range xds.Versions() {
			m, err := xds.ForVersion(v)
			if err != nil {
				t.Fatal(err)
			}
			var pl plan.Planner
			var pd xds.Predictor
			count, at := plan.EachIn(g)
			for i := range count {
				fresh, reused := at(i, nil), at(i, &pl)
				if !reflect.DeepEqual(fresh, reused) {
					t.Fatalf("seed %d, Rollout %d: the Planner's plan differs from ForRollout's", o.Seed, i)
				}
				if fresh == nil {
					continue
				}
				if want, got := xds.Predict(m, sc, fresh), pd.Predict(m, sc, reused); !reflect.DeepEqual(want, got) {
					t.Fatalf("seed %d, Rollout %d, Istio %s: the Predictor's prediction differs from Predict's", o.Seed, i, v)
				}
			}
		}
	}
}
