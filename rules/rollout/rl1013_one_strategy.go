package rollout

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// OneStrategy reports a Rollout with neither or both of canary and blueGreen.
var OneStrategy = &rules.Rule{
	ID: "RL1013", Name: "one-strategy", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "spec.strategy sets neither canary nor blueGreen, or both.",
	Doc: rules.Doc{
		Why: `A Rollout deploys with exactly one strategy. Argo Rollouts rejects a Rollout with neither
\'canary\' nor \'blueGreen\' ("Rollout has missing field '.spec.strategy.canary or
.spec.strategy.blueGreen'") and one with both ("Multiple Strategies can not be listed"); it
stays \'InvalidSpec\'. A strategy misspelt (\'canery:\') also ends here, next to RL0003.`,
		Bad: `
  strategy:
    canary:
      steps: [{setWeight: 50}]
    blueGreen:
      activeService: checkout
`,
		Good: `
  strategy:
    canary:
      steps: [{setWeight: 50}]
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			s := ro.Spec.Strategy
			switch {
			case s.Canary == nil && s.BlueGreen == nil:
				p.ReportDetail(r, "spec.strategy", "Rollout "+ro.Name+" has no strategy",
					"Argo Rollouts marks it InvalidSpec. Set spec.strategy.canary or spec.strategy.blueGreen.")
			case s.Canary != nil && s.BlueGreen != nil:
				at, other := later(r, "spec.strategy.canary", "spec.strategy.blueGreen")
				p.ReportDetail(r, at, "Rollout "+ro.Name+" sets both canary and blueGreen strategies", "Keep one.",
					rules.RelatedAt(r, other, "the other strategy"))
			}
		})
		return nil
	},
}
