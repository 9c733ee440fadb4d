package rollout

import (
	"fmt"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// CanaryScaleMode reports setCanaryScale steps whose settings are ignored or
// out of range.
var CanaryScaleMode = &rules.Rule{
	ID: "RL1022", Name: "set-canary-scale-mode", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "A setCanaryScale step sets several of matchTrafficWeight, replicas and weight (only one is used), none, or a weight outside 0..100.",
	Doc: rules.Doc{
		Why: `\'setCanaryScale\' picks the canary's replica count in one of three ways. Argo Rollouts does not
validate the step; it uses \'matchTrafficWeight: true\' if set, else \'replicas\', else \'weight\'
(percent of \'spec.replicas\'), and silently ignores the others. An empty \'setCanaryScale: {}\'
behaves like \'matchTrafficWeight\'. A \'weight\' above 100 asks for more canary pods than the
Rollout's replicas; a negative one or negative \'replicas\' is meaningless. The canary then
runs with a different capacity than the author expected, which is found only under load.`,
		Bad: `
      steps:
      - setCanaryScale: {replicas: 2, weight: 50}
      - setWeight: 50
`,
		Good: `
      steps:
      - setCanaryScale: {weight: 50}
      - setWeight: 50
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachStep(p, func(r *graph.Resource, _ *v1alpha1.Rollout, i int, s *v1alpha1.CanaryStep, path string) {
			sc := s.SetCanaryScale
			if sc == nil {
				return
			}
			at := path + ".setCanaryScale"
			var set []string
			if sc.MatchTrafficWeight {
				set = append(set, "matchTrafficWeight")
			}
			if sc.Replicas != nil {
				set = append(set, "replicas")
			}
			if sc.Weight != nil {
				set = append(set, "weight")
			}
			switch {
			case len(set) > 1:
				p.ReportDetail(r, at+"."+set[1], fmt.Sprintf("step %d: setCanaryScale sets %s", i, strings.Join(set, " and ")),
					fmt.Sprintf("Argo Rollouts uses only %s and ignores the rest.", set[0]))
				return
			case len(set) == 0:
				p.ReportDetail(r, at, fmt.Sprintf("step %d: setCanaryScale sets none of matchTrafficWeight, replicas and weight", i),
					"It only resets scaling to follow the traffic weight; say matchTrafficWeight: true if that is meant.")
				return
			}
			if sc.Weight != nil && (*sc.Weight < 0 || *sc.Weight > 100) {
				p.Reportf(r, at+".weight", "step %d: setCanaryScale weight %d is outside 0..100 (percent of spec.replicas)", i, *sc.Weight)
			}
			if sc.Replicas != nil && *sc.Replicas < 0 {
				p.Reportf(r, at+".replicas", "step %d: setCanaryScale replicas %d is negative", i, *sc.Replicas)
			}
		})
		return nil
	},
}
