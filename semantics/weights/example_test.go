package weights_test

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/semantics/weights"
)

func ExamplePlan() {
	w := func(n int32) *int32 { return &n }
	steps := []v1alpha1.CanaryStep{
		{SetWeight: w(20)},
		{Experiment: &v1alpha1.RolloutExperimentStep{Templates: []v1alpha1.RolloutExperimentTemplate{{Name: "baseline", Weight: w(10)}}}},
		{SetWeight: w(80)},
	}
	// One destination kept through additionalSubsetNames at weight 30.
	for _, s := range weights.Plan(steps, []int32{30}) {
		fmt.Printf("step %d: stable %d canary %d experiment %d additional %d overflow %d\n",
			s.Index, s.Split.Stable, s.Split.Canary, s.Split.Experiment, s.Split.Additional, s.Split.Overflow())
	}
	// Output:
	// step 0: stable 50 canary 20 experiment 0 additional 30 overflow 0
	// step 1: stable 40 canary 20 experiment 10 additional 30 overflow 0
	// step 2: stable 0 canary 80 experiment 0 additional 30 overflow 10
}
