package rollout

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// MaxTrafficWeight reports maxTrafficWeight with a router that ignores it.
var MaxTrafficWeight = &rules.Rule{
	ID: "RL1015", Name: "max-traffic-weight-router", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout", "traffic"},
	Summary: "trafficRouting.maxTrafficWeight with a router other than nginx or a plugin (Istio weights are always out of 100).",
	Doc: rules.Doc{
		Why: `\'maxTrafficWeight\' changes the scale of \'setWeight\' for routers whose weights are not
percentages (nginx, plugins). Istio VirtualService weights always add up to 100, so Argo
Rollouts rejects the field with any other router ("Canary maxTrafficWeight in traffic
routing only supported in Nginx and Plugins") and the Rollout is \'InvalidSpec\'.`,
		Bad: `
      trafficRouting:
        maxTrafficWeight: 1000
        istio:
          virtualService: {name: checkout, routes: [primary]}
`,
		Good: `
      trafficRouting:
        istio:
          virtualService: {name: checkout, routes: [primary]}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			tr := routingOf(ro)
			if tr == nil || tr.MaxTrafficWeight == nil || anyRouter(tr, "nginx", "plugins") {
				return
			}
			p.ReportDetail(r, routingPath+".maxTrafficWeight", fmt.Sprintf("maxTrafficWeight %d needs nginx or plugin routing, not %s", *tr.MaxTrafficWeight, routerList(tr)),
				"Argo Rollouts marks the Rollout InvalidSpec. Remove it and give setWeight in percent.")
		})
		return nil
	},
}
