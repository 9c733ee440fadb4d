package rollout

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// IstioVirtualServiceFields reports an istio routing block with both or
// neither of virtualService and virtualServices.
var IstioVirtualServiceFields = &rules.Rule{
	ID: "RL1012", Name: "istio-virtualservice-one-form", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout", "traffic"},
	Summary: "trafficRouting.istio sets both virtualService and virtualServices, or neither.",
	Doc: rules.Doc{
		Why: `Istio traffic routing names the VirtualService(s) to rewrite either with \'virtualService\'
(one) or \'virtualServices\' (a list), never both, and needs one of them. The controller rejects
the Rollout ("either VirtualService or VirtualServices must be configured"). \'kubectl argo
rollouts lint\' does not check this, so it is typically found only when the Rollout is
already applied and stuck \'InvalidSpec\'.`,
		Bad: `
        istio:
          virtualService: {name: checkout, routes: [primary]}
          virtualServices:
          - {name: checkout-internal, routes: [primary]}
`,
		Good: `
        istio:
          virtualServices:
          - {name: checkout, routes: [primary]}
          - {name: checkout-internal, routes: [primary]}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			tr := routingOf(ro)
			if tr == nil || tr.Istio == nil {
				return
			}
			ist := routingPath + ".istio"
			one, many := tr.Istio.VirtualService != nil, tr.Istio.VirtualServices != nil
			switch {
			case one && many:
				at, other := later(r, ist+".virtualService", ist+".virtualServices")
				p.ReportDetail(r, at, "trafficRouting.istio of Rollout "+ro.Name+" sets both virtualService and virtualServices",
					"Keep one: list every VirtualService under virtualServices.",
					rules.RelatedAt(r, other, "the other form"))
			case !one && !many:
				p.ReportDetail(r, ist, "trafficRouting.istio of Rollout "+ro.Name+" names no VirtualService",
					"Set virtualService (or virtualServices) with the routes Argo Rollouts should weight.")
			}
		})
		return nil
	},
}
