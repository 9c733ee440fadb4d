package plan

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	aplan "github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// GatewayFanout reports a managed VirtualService that no gateway uses but
// whose every rollout write is pushed to every gateway proxy.
var GatewayFanout = &rules.Rule{
	ID: "RL6003", Name: "mesh-route-pushes-every-gateway", Severity: rules.Info, Source: rules.SourceGo, OptIn: true,
	Kinds: []string{kinds.Rollout, kinds.VirtualService, kinds.Sidecar}, Tags: []string{"plan", "istio", "xds", "performance"},
	Summary: "Each weight write on a mesh-only VirtualService is a full push to every gateway and to sidecars in every namespace.",
	Doc: rules.Doc{
		Why: `istiod decides which proxies a VirtualService change reaches before it looks at the
VirtualService's \'gateways\': every gateway proxy is pushed for every VirtualService change (the
content only differs for gateways that bind it), and every sidecar whose scope imports the
VirtualService is pushed too. A VirtualService bound only to the mesh, with no \'exportTo\' and
no \'Sidecar\' egress list narrowing it, is imported by sidecars in every namespace. A canary
on it then costs one full push to the whole mesh per step.

The gateway part cannot be avoided, but the sidecar part can: export the VirtualService only
to the namespaces that call the service, and give those namespaces a \'Sidecar\' with egress
hosts, so that only their proxies recompute.`,
		Bad: `
kind: VirtualService
metadata: {name: pay, namespace: pay}
spec:
  hosts: [pay]          # mesh-only, exported everywhere
  http:
  - route: [...]
`,
		Good: `
kind: VirtualService
metadata: {name: pay, namespace: pay}
spec:
  hosts: [pay]
  exportTo: [".", checkout]
  http:
  - route: [...]
`,
	},
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		preds, m, err := predicted(p)
		if err != nil {
			return err
		}
		seen := map[aplan.Object]bool{}
		for _, pr := range preds {
			counts := map[aplan.Object]int{}
			var order []aplan.Object
			for i, s := range pr.Plan.States {
				for _, x := range pr.Prediction.States[i].Pushes {
					if !x.Class.IsFull() || !x.Scope.AllGateways {
						continue
					}
					for _, w := range x.Writes {
						o := s.Writes[w].Object
						if o.Kind != "VirtualService" {
							continue
						}
						if counts[o] == 0 {
							order = append(order, o)
						}
						counts[o]++
						break
					}
				}
			}
			for _, o := range order {
				if seen[o] {
					continue
				}
				seen[o] = true
				reportFanout(p, m, pr.Plan, o, counts[o])
			}
		}
		return nil
	},
}

func reportFanout(p *rules.Pass, m *xds.Model, pl *aplan.Plan, o aplan.Object, pushes int) {
	r := p.Graph.Get(kinds.VirtualService, o.Namespace, o.Name)
	if r == nil || r.VirtualService() == nil {
		return
	}
	vs := r.VirtualService()
	for _, g := range vs.Spec.GetGateways() {
		if g != "mesh" {
			return // a gateway uses it: the gateway pushes carry real changes
		}
	}
	for _, e := range vs.Spec.GetExportTo() {
		if e != "*" {
			return // already narrowed
		}
	}
	scope := xds.ScoperFor(p.Graph, m.Version).For(xds.KindVirtualService, aplan.Write{Resource: r}, true)
	if len(scope.SidecarNamespaces) != 1 || scope.SidecarNamespaces[0] != "*" || len(scope.SidecarExcept) > 0 {
		return // Sidecar egress hosts already narrow the sidecars
	}
	path := "spec.hosts"
	if r.Exists("spec.gateways") {
		path = "spec.gateways"
	}
	p.ReportDetail(r, path, fmt.Sprintf("Rollout %s/%s makes %d full pushes through VirtualService %s/%s to every proxy", pl.Rollout.Namespace, pl.Rollout.Name, pushes, o.Namespace, o.Name),
		fmt.Sprintf("The VirtualService is bound to no gateway, yet in the Istio %s model each push goes to every gateway proxy and to sidecars in all namespaces. "+
			"Set exportTo to the calling namespaces and give them a Sidecar with egress hosts to narrow the fan-out.", m.Version),
		rules.RelatedAt(pl.Resource, "spec.strategy.canary.trafficRouting.istio", "the Rollout that writes it"))
}
