package plan_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
)

// TestStatesOfMatchesForRollout checks that StatesOf plays exactly the states
// ForRollout plays, writes left out, over the plan fixtures, the scenario
// bundles and a generated corpus with mistakes (weights over 100).
func TestStatesOfMatchesForRollout(t *testing.T) {
	graphs := map[string]*graph.Graph{
		"corpus": load.Inputs(corpus.Generate(corpus.Options{Rollouts: 60, MistakeRate: 0.3, Seed: 3}), load.Options{}),
	}
	for _, dir := range []string{"plan", "bundles"} {
		g, err := load.Paths([]string{filepath.Join("..", "..", "testdata", dir)}, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		graphs[dir] = g
	}
	for name, g := range graphs {
		planned := 0
		for _, rr := range g.Refs().Rollouts {
			full, states := plan.ForRollout(g, rr), plan.StatesOf(g, rr)
			if full == nil || states == nil {
				if full != states {
					t.Errorf("%s: %s: ForRollout %v, StatesOf %v", name, rr.Rollout.Name, full, states)
				}
				continue
			}
			planned++
			writes := 0
			for _, list := range [][]plan.State{full.States, full.Abort} {
				for i := range list {
					writes += len(list[i].Writes)
					list[i].Writes = nil
				}
			}
			if writes == 0 {
				t.Errorf("%s: %s: ForRollout recorded no writes", name, rr.Rollout.Name)
			}
			if !reflect.DeepEqual(full, states) {
				t.Errorf("%s: %s: StatesOf differs from ForRollout without writes:\n%+v\n%+v", name, rr.Rollout.Name, states, full)
			}
		}
		if planned == 0 {
			t.Errorf("%s: no Rollout planned", name)
		}
	}
}

// TestStatesStayPut checks that building a plan never changes a state it has
// already emitted, although states share routes, labels and managed routes
// with the states after them: every step keeps the canary weight it set, the
// state the abort path starts from (the pause with the most canary traffic)
// keeps its traffic after the abort path reset the routes, and the managed
// routes stay those of their step.
func TestStatesStayPut(t *testing.T) {
	for _, name := range []string{"host-level.yaml", "subset-level.yaml", "header-mirror.yaml", "additional-subsets.yaml"} {
		p := fixture(t, name)
		maxW := int32(-1)
		steps := p.Refs.Spec.Spec.Strategy.Canary.Steps
		for _, s := range p.States {
			if s.Phase == plan.PhaseStep && s.CanaryWeight() != s.Weight {
				t.Errorf("%s: %s: canary weight %d in the routes, want %d", name, s.Path, s.CanaryWeight(), s.Weight)
			}
			if s.Phase == plan.PhaseStep && steps[s.Step].Pause != nil {
				maxW = max(maxW, s.CanaryWeight())
			}
		}
		if from := p.States[p.AbortFrom]; from.CanaryWeight() != maxW || steps[from.Step].Pause == nil {
			t.Errorf("%s: abort starts from state %d with canary weight %d, want the pause with the most, %d", name, p.AbortFrom, from.CanaryWeight(), maxW)
		}
		if len(p.Abort) == 0 || p.Abort[0].CanaryWeight() != 0 {
			t.Errorf("%s: abort path %+v does not bring the canary weight to 0", name, p.Abort)
		}
	}
	p := fixture(t, "header-mirror.yaml")
	var managed []int
	for _, s := range p.States {
		managed = append(managed, len(s.Managed))
	}
	// before, start, setCanaryScale, header on, mirror on, pause, mirror
	// off, setCanaryScale, setWeight 10, setCanaryScale, setWeight 60,
	// promote (all removed), scale-down.
	if want := []int{0, 0, 0, 1, 2, 2, 1, 1, 1, 1, 1, 0, 0}; !reflect.DeepEqual(managed, want) {
		t.Errorf("managed routes per state %v, want %v", managed, want)
	}
}
