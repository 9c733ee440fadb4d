package weights

import (
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

func TestCompute(t *testing.T) {
	cases := []struct {
		name         string
		canary       int32
		exp, add     []int32
		stable, over int32
	}{
		{"plain", 20, nil, nil, 80, 0},
		{"full", 100, nil, nil, 0, 0},
		{"experiment fits", 20, []int32{10, 10}, nil, 60, 0},
		{"experiment overflows", 70, []int32{50}, nil, 0, 20},
		{"additional overflows", 80, nil, []int32{30}, 0, 10},
		{"additional fits", 50, nil, []int32{30}, 20, 0},
	}
	for _, c := range cases {
		s := Compute(c.canary, c.exp, c.add)
		if s.Stable != c.stable || s.Overflow() != c.over {
			t.Errorf("%s: stable %d overflow %d, want %d and %d", c.name, s.Stable, s.Overflow(), c.stable, c.over)
		}
		if c.over == 0 && s.Sum() != Total {
			t.Errorf("%s: sum %d, want %d", c.name, s.Sum(), Total)
		}
	}
}

func TestPlanCarriesCanaryWeight(t *testing.T) {
	w := func(n int32) *int32 { return &n }
	steps := []v1alpha1.CanaryStep{
		{SetWeight: w(30)},
		{Pause: &v1alpha1.RolloutPause{}},
		{Experiment: &v1alpha1.RolloutExperimentStep{Templates: []v1alpha1.RolloutExperimentTemplate{{Name: "a", Weight: w(20)}, {Name: "b"}}}},
		{SetWeight: w(90)},
	}
	got := Plan(steps, []int32{15})
	want := []struct {
		canary, stable, exp int32
		sets                bool
	}{{30, 55, 0, true}, {30, 55, 0, false}, {30, 35, 20, true}, {90, 0, 0, true}}
	for i, s := range got {
		if s.Split.Canary != want[i].canary || s.Split.Stable != want[i].stable || s.Split.Experiment != want[i].exp || s.Sets != want[i].sets {
			t.Errorf("step %d: %+v (sets %v), want %+v", i, s.Split, s.Sets, want[i])
		}
	}
	if got[3].Split.Overflow() != 5 {
		t.Errorf("step 3 overflow %d, want 5", got[3].Split.Overflow())
	}
}
