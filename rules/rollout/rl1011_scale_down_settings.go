package rollout

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// DynamicStableScale reports dynamicStableScale and scaleDownDelaySeconds
// combinations Argo Rollouts rejects.
var DynamicStableScale = &rules.Rule{
	ID: "RL1011", Name: "scale-down-settings", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "dynamicStableScale with scaleDownDelaySeconds, or either of them without trafficRouting.",
	Doc: rules.Doc{
		Why: `\'scaleDownDelaySeconds\' keeps the old ReplicaSet up after traffic moved away from it, and
\'dynamicStableScale\' scales the stable ReplicaSet down as the canary weight grows. Both
only make sense when a router, not the replica ratio, decides where traffic goes, and they
contradict each other (one keeps the old pods, the other removes them early). Argo Rollouts
rejects each of these combinations ("Canary dynamicStableScale cannot be used with
scaleDownDelaySeconds", "... can only be used with traffic routing") and marks the Rollout
\'InvalidSpec\'.`,
		Bad: `
    canary:
      dynamicStableScale: true
      scaleDownDelaySeconds: 30
`,
		Good: `
    canary:
      dynamicStableScale: true
      trafficRouting:
        istio:
          virtualService: {name: checkout, routes: [primary]}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			c := canaryOf(ro)
			if c == nil {
				return
			}
			dss, delay := canaryPath+".dynamicStableScale", canaryPath+".scaleDownDelaySeconds"
			if c.TrafficRouting == nil {
				if c.DynamicStableScale {
					p.ReportDetail(r, dss, "dynamicStableScale needs trafficRouting",
						"Without a router the replica ratio is the traffic split, so the stable ReplicaSet cannot shrink on its own; Argo Rollouts marks the Rollout InvalidSpec.")
				}
				if c.ScaleDownDelaySeconds != nil {
					p.ReportDetail(r, delay, "scaleDownDelaySeconds "+itoa(int(*c.ScaleDownDelaySeconds))+" needs trafficRouting",
						"It delays scaling down a ReplicaSet a router has stopped sending traffic to; Argo Rollouts marks the Rollout InvalidSpec.")
				}
				return
			}
			if c.DynamicStableScale && c.ScaleDownDelaySeconds != nil {
				p.ReportDetail(r, dss, "dynamicStableScale contradicts scaleDownDelaySeconds "+itoa(int(*c.ScaleDownDelaySeconds)),
					"One shrinks the stable ReplicaSet early, the other keeps the old one; Argo Rollouts marks the Rollout InvalidSpec. Drop one.",
					rules.RelatedAt(r, delay, "scaleDownDelaySeconds"))
			}
		})
		return nil
	},
}
