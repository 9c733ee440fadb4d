package rollout

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// defaultRevisionHistoryLimit is Argo Rollouts' default revisionHistoryLimit.
const defaultRevisionHistoryLimit = 10

// ScaleDownRevisionLimit reports a blue-green scaleDownDelayRevisionLimit above
// the revision history limit.
var ScaleDownRevisionLimit = &rules.Rule{
	ID: "RL1019", Name: "scale-down-revision-limit", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "blueGreen scaleDownDelayRevisionLimit is larger than revisionHistoryLimit (default 10).",
	Doc: rules.Doc{
		Why: `\'scaleDownDelayRevisionLimit\' keeps that many old ReplicaSets running during their scale-down
delay; \'revisionHistoryLimit\' (default 10) is how many old ReplicaSets are kept at all. Keeping
more running than exist is contradictory, and Argo Rollouts rejects it ("This rollout's
revision history limit can not be smaller than the rollout's scale down limit"); the
Rollout is \'InvalidSpec\'.`,
		Bad: `
spec:
  revisionHistoryLimit: 2
  strategy:
    blueGreen:
      activeService: app
      scaleDownDelayRevisionLimit: 3
`,
		Good: `
spec:
  revisionHistoryLimit: 5
  strategy:
    blueGreen:
      activeService: app
      scaleDownDelayRevisionLimit: 3
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			bg := ro.Spec.Strategy.BlueGreen
			if bg == nil || bg.ScaleDownDelayRevisionLimit == nil {
				return
			}
			limit := int32(defaultRevisionHistoryLimit)
			if ro.Spec.RevisionHistoryLimit != nil {
				limit = *ro.Spec.RevisionHistoryLimit
			}
			if *bg.ScaleDownDelayRevisionLimit <= limit {
				return
			}
			var related []rules.Related
			what := "the default revisionHistoryLimit"
			if ro.Spec.RevisionHistoryLimit != nil {
				what = "revisionHistoryLimit"
				related = append(related, rules.RelatedAt(r, "spec.revisionHistoryLimit", "revisionHistoryLimit"))
			}
			p.ReportDetail(r, "spec.strategy.blueGreen.scaleDownDelayRevisionLimit", "scaleDownDelayRevisionLimit "+itoa(int(*bg.ScaleDownDelayRevisionLimit))+
				" is larger than "+what+" "+itoa(int(limit)),
				"More old ReplicaSets would be kept running than are kept at all; Argo Rollouts marks the Rollout InvalidSpec.",
				related...)
		})
		return nil
	},
}
