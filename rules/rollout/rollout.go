// Package rollout holds the RL1xxx rules: a Rollout's own spec, with Argo
// Rollouts' validation semantics but rolloutlint's positions and messages.
package rollout

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// stepsPath is the field path of the canary steps list.
const stepsPath = "spec.strategy.canary.steps"

// eachRollout calls fn for every typed Rollout of the bundle.
func eachRollout(p *rules.Pass, fn func(r *graph.Resource, ro *v1alpha1.Rollout)) {
	for _, r := range p.OfKind(kinds.Rollout) {
		if ro := r.Rollout(); ro != nil {
			fn(r, ro)
		}
	}
}

// eachStep calls fn for every canary step with its field path.
func eachStep(p *rules.Pass, fn func(r *graph.Resource, ro *v1alpha1.Rollout, i int, step *v1alpha1.CanaryStep, path string)) {
	eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
		c := ro.Spec.Strategy.Canary
		if c == nil {
			return
		}
		for i := range c.Steps {
			fn(r, ro, i, &c.Steps[i], stepPath(i))
		}
	})
}

// stepPaths are the first steps' field paths, which every step rule names
// for every Rollout: built once, not once per step per rule.
var stepPaths = func() (out [32]string) {
	for i := range out {
		out[i] = graph.Index(stepsPath, i)
	}
	return out
}()

// stepPath is graph.Index(stepsPath, i).
func stepPath(i int) string {
	if i < len(stepPaths) {
		return stepPaths[i]
	}
	return graph.Index(stepsPath, i)
}

// later returns, of two field paths, the one written later in the file first,
// then the other: a conflict is reported where the reader meets its second half.
func later(r *graph.Resource, a, b string) (string, string) {
	pa, pb := r.Pos(a), r.Pos(b)
	if pa.Line > pb.Line || (pa.Line == pb.Line && pa.Column > pb.Column) {
		return a, b
	}
	return b, a
}
