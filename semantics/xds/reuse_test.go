package xds_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/graph"
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
	var graphs []*graph.Graph
	var names []string
	for _, o := range []corpus.Options{
		{Rollouts: n, Seed: 11},
		{Rollouts: n, Seed: 12, MistakeRate: 0.3},
		{Rollouts: n / 2, Seed: 13, Profile: corpus.Gateways, MistakeRate: 0.1},
	} {
		graphs = append(graphs, load.Inputs(corpus.Generate(o), load.Options{}))
		names = append(names, fmt.Sprintf("corpus seed %d", o.Seed))
	}
	// The hand-written plans hold what a generated bundle does not (a
	// route left with no destination: null, not []).
	for _, dir := range []string{"plan", "xds-conformance/scenarios", "repos/mixed", "rules/RL2001"} {
		g, err := load.Paths([]string{filepath.Join("..", "..", "testdata", dir)}, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		graphs = append(graphs, g)
		names = append(names, dir)
	}
	for gi, g := range graphs {
		name := names[gi]
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
					t.Fatalf("%s, Rollout %d: the Planner's plan differs from ForRollout's", name, i)
				}
				if fresh == nil {
					continue
				}
				if want, got := xds.Predict(m, sc, fresh), pd.Predict(m, sc, reused); !reflect.DeepEqual(want, got) {
					t.Fatalf("%s, Rollout %d, Istio %s: the Predictor's prediction differs from Predict's", name, i, v)
				}
			}
		}
	}
}
