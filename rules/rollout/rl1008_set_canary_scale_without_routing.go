package rollout

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// CanaryScaleNoRouting reports setCanaryScale steps in a canary without
// traffic routing.
var CanaryScaleNoRouting = &rules.Rule{
	ID: "RL1008", Name: "set-canary-scale-without-routing", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "A setCanaryScale step in a canary without trafficRouting.",
	Doc: rules.Doc{
		Why: `\'setCanaryScale\' decouples the canary's replica count from its traffic weight. Without
\'trafficRouting\' the weight *is* the replica ratio, so there is nothing to decouple: Argo
Rollouts rejects the Rollout ("SetCanaryScale requires TrafficRouting to be set") and it
stays \'InvalidSpec\'. Either configure traffic routing or use \'setWeight\' alone.`,
		Bad: `
    canary:
      steps:
      - setCanaryScale: {replicas: 1}
      - setWeight: 20
`,
		Good: `
    canary:
      canaryService: checkout-canary
      stableService: checkout-stable
      trafficRouting:
        istio:
          virtualService: {name: checkout, routes: [primary]}
      steps:
      - setCanaryScale: {replicas: 1}
      - setWeight: 20
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachStep(p, func(r *graph.Resource, ro *v1alpha1.Rollout, i int, s *v1alpha1.CanaryStep, path string) {
			if s.SetCanaryScale == nil || routingOf(ro) != nil {
				return
			}
			p.ReportDetail(r, path+".setCanaryScale", fmt.Sprintf("step %d: setCanaryScale needs spec.strategy.canary.trafficRouting", i),
				"Without a router the replica ratio is the traffic weight; Argo Rollouts marks the Rollout InvalidSpec.")
		})
		return nil
	},
}
