// Package weights is Argo Rollouts' traffic arithmetic for Istio: given the
// canary weight a step sets, the weights of experiment destinations and of
// destinations kept through additionalSubsetNames, it says what the controller
// writes into each managed route. The linter's weight rules and the step
// planner share it so that both predict the same split.
package weights

import "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

// Total is the weight Istio expects a route's destinations to add up to.
// (Argo's maxTrafficWeight applies to other routers only; Istio is always 100.)
const Total int32 = 100

// Split is the set of weights Argo writes into one managed route.
type Split struct {
	Canary int32
	// Stable is Total − Canary − Experiment − Additional, clamped at 0 the way
	// the controller does ("Istio does not allow negative weights").
	Stable int32
	// Experiment is the sum of the weights of the experiment templates that
	// run in the step (each gets its own destination).
	Experiment int32
	// Additional is the sum of the weights of destinations whose subset is in
	// additionalSubsetNames; Argo keeps their current weight.
	Additional int32
}

// Compute returns the split for a canary weight and the other destinations'
// weights.
func Compute(canary int32, experiment, additional []int32) Split {
	s := Split{Canary: canary}
	for _, w := range experiment {
		s.Experiment += w
	}
	for _, w := range additional {
		s.Additional += w
	}
	s.Stable = Total - s.Canary - s.Experiment - s.Additional
	if s.Stable < 0 {
		s.Stable = 0
	}
	return s
}

// Sum is the total of the weights Argo writes.
func (s Split) Sum() int32 { return s.Stable + s.Canary + s.Experiment + s.Additional }

// Overflow is how far the written weights exceed Total (0 when they do not):
// the stable weight was clamped and the route no longer splits as the step says.
func (s Split) Overflow() int32 {
	if d := s.Sum() - Total; d > 0 {
		return d
	}
	return 0
}

// Step is the split in force while one canary step runs.
type Step struct {
	Index int
	Split Split
	// Sets reports whether this step changes the weights (setWeight, or an
	// experiment with weighted templates).
	Sets bool
}

// Plan walks a canary's steps and returns the split in force during each, for
// routes whose additional destinations weigh additional. A setWeight step sets
// the canary weight, which then holds for the following steps; an experiment
// step adds its weighted templates for that step only.
func Plan(steps []v1alpha1.CanaryStep, additional []int32) []Step {
	out := make([]Step, 0, len(steps))
	var canary int32
	for i, st := range steps {
		var exp []int32
		sets := false
		if st.SetWeight != nil {
			canary, sets = *st.SetWeight, true
		}
		if st.Experiment != nil {
			for _, t := range st.Experiment.Templates {
				if t.Weight != nil {
					exp = append(exp, *t.Weight)
					sets = true
				}
			}
		}
		out = append(out, Step{Index: i, Split: Compute(canary, exp, additional), Sets: sets})
	}
	return out
}
