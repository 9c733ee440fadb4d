package rollout

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// SetWeightRange reports setWeight values outside 0..maxTrafficWeight.
var SetWeightRange = &rules.Rule{
	ID: "RL1001", Name: "set-weight-range", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "A canary step's setWeight is outside 0..100 (or 0..maxTrafficWeight).",
	Doc: rules.Doc{
		Why: `Argo Rollouts rejects the whole Rollout (condition \'InvalidSpec\': "SetWeight needs to be between 0
and 100") when a step's \'setWeight\' is negative or above the maximum traffic weight, which is 100
unless \'trafficRouting.maxTrafficWeight\' sets another scale (nginx and plugins only). The
rollout then does not progress at all: not even the first step runs.`,
		Bad: `
    canary:
      steps:
      - setWeight: 120
`,
		Good: `
    canary:
      steps:
      - setWeight: 20
      - pause: {duration: 10m}
      - setWeight: 100
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachStep(p, func(r *graph.Resource, ro *v1alpha1.Rollout, i int, s *v1alpha1.CanaryStep, path string) {
			if s.SetWeight == nil {
				return
			}
			maxW := int32(100)
			if tr := ro.Spec.Strategy.Canary.TrafficRouting; tr != nil && tr.MaxTrafficWeight != nil {
				maxW = *tr.MaxTrafficWeight
			}
			if w := *s.SetWeight; w < 0 || w > maxW {
				p.ReportDetail(r, path+".setWeight", fmt.Sprintf("step %d: setWeight %d is outside 0..%d", i, w, maxW),
					"Argo Rollouts marks the Rollout InvalidSpec and runs no step.")
			}
		})
		return nil
	},
}
