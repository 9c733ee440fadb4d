package rollout

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// SameService reports a Rollout that uses one Service for two roles that must
// be distinct: canary/stable, active/preview, ping/pong.
var SameService = &rules.Rule{
	ID: "RL1006", Name: "same-service-two-roles", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "canaryService equals stableService, activeService equals previewService, or pingService equals pongService.",
	Doc: rules.Doc{
		Why: `Argo Rollouts points each role's Service selector at a different ReplicaSet (it writes
\'rollouts-pod-template-hash\' into it). One Service cannot select both the stable and the
canary pods, so the controller rejects such a Rollout ("two different services are
required"), marks it \'InvalidSpec\' and does not progress. The same holds for blue-green
\'activeService\'/\'previewService\' and for \'pingPong\' \'pingService\'/\'pongService\'.`,
		Bad: `
    canary:
      canaryService: checkout
      stableService: checkout
`,
		Good: `
    canary:
      canaryService: checkout-canary
      stableService: checkout-stable
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			pair := func(base, aField, a, bField, b, what string) {
				if a == "" || a != b {
					return
				}
				at, other := later(r, base+"."+aField, base+"."+bField)
				p.ReportDetail(r, at, "Service "+a+" is both "+aField+" and "+bField+" of Rollout "+ro.Name,
					"One selector cannot follow two ReplicaSets; Argo Rollouts marks the Rollout InvalidSpec. Create a separate "+what+" Service.",
					rules.RelatedAt(r, other, "the same Service in the other role"))
			}
			if c := ro.Spec.Strategy.Canary; c != nil {
				pair(canaryPath, "canaryService", c.CanaryService, "stableService", c.StableService, "canary")
				if pp := c.PingPong; pp != nil {
					pair(canaryPath+".pingPong", "pingService", pp.PingService, "pongService", pp.PongService, "pong")
				}
			}
			if bg := ro.Spec.Strategy.BlueGreen; bg != nil {
				pair("spec.strategy.blueGreen", "activeService", bg.ActiveService, "previewService", bg.PreviewService, "preview")
			}
		})
		return nil
	},
}
