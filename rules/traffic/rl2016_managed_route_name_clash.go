package traffic

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// ManagedRouteClash reports VirtualService routes that carry the name of a
// header/mirror route the Rollout creates and deletes itself.
var ManagedRouteClash = &rules.Rule{
	ID: "RL2016", Name: "managed-route-name-clash", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.VirtualService}, Tags: tags,
	Summary: "A VirtualService route in git has the name of a route listed in the Rollout's managedRoutes.",
	Doc: rules.Doc{
		Why: `The routes listed in \'trafficRouting.managedRoutes\' belong to the controller: a
\'setHeaderRoute\' or \'setMirrorRoute\' step removes the route of that name from the VirtualService
and re-creates it (header routes at the end, mirror routes at the front, managed routes then
reordered first), and the controller deletes them when the rollout completes or aborts. A
route in git with the same name is therefore replaced or deleted — its match and destinations
are lost, and the traffic it carried falls through to other routes.

Fix: rename either the route in the VirtualService or the managed route.`,
		Bad: `
# Rollout
managedRoutes: [{name: beta}]
---
# VirtualService
http:
- name: beta          # deleted when the rollout ends
  match: [{headers: {x-beta: {exact: "1"}}}]
  route: [{destination: {host: checkout-beta}}]
`,
		Good: `
managedRoutes: [{name: canary-beta}]
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		for _, rr := range p.Rollouts() {
			if len(rr.VirtualServices) == 0 {
				continue
			}
			managed := rr.Spec.Spec.Strategy.Canary.TrafficRouting.ManagedRoutes
			if len(managed) == 0 {
				continue
			}
			seen := map[*graph.Resource]bool{}
			for _, vs := range rr.VirtualServices {
				spec := vsSpec(vs.Target)
				if spec == nil || seen[vs.Target] {
					continue
				}
				seen[vs.Target] = true
				for i, h := range spec.GetHttp() {
					for j, m := range managed {
						if m.Name == "" || h.GetName() != m.Name {
							continue
						}
						p.ReportDiag(rules.Diagnostic{Resource: vs.Target, Path: graph.Index("spec.http", i) + ".name",
							Message: fmt.Sprintf("http route %q of VirtualService %s/%s has the name of a route Rollout %s manages (managedRoutes)",
								m.Name, vs.Target.Namespace, vs.Target.Name, rr.Rollout.Name),
							Detail:  "The controller replaces it at a setHeaderRoute or setMirrorRoute step and deletes it when the rollout ends.",
							Related: []rules.Related{rules.RelatedAt(rr.Rollout, graph.Index("spec.strategy.canary.trafficRouting.managedRoutes", j)+".name", "the managed route")}})
					}
				}
			}
		}
		return nil
	},
}
