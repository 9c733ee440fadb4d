package istio

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// managedRoute reports whether a Rollout manages the route (its weights are
// then the controller's business and RL2xxx's).
func managedRoute(g *graph.Graph, r *graph.Resource, e routeEntry) bool {
	k := graph.RouteKey{VS: graph.ObjectKey{Kind: "VirtualService", Namespace: r.Namespace, Name: r.Name}, Kind: e.kind, Index: e.index}
	return len(g.Refs().RouteUsers(k)) > 0
}

// RouteWeights reports unmanaged routes whose weights do not say what they
// mean: all zero (rejected), or not summing to 100 (silently rescaled).
var RouteWeights = &rules.Rule{
	ID: "RL3009", Name: "route-weights", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.VirtualService, kinds.Rollout}, Tags: []string{"istio"},
	Summary: "A route not managed by a Rollout splits traffic with weights that do not sum to 100, or are all zero.",
	Doc: rules.Doc{
		Why: `Istio treats destination weights as relative: a route with weights 90 and 20 sends 82% and 18%,
not 90% and 20%, and nothing warns (Istio dropped the "must sum to 100" validation). A destination
without \'weight\' next to weighted ones gets weight 0 and no traffic. When every destination of a
multi-destination route has weight 0, the Istio validating webhook rejects the VirtualService
(\'total destination weight = 0\'), so the whole apply fails.

Routes managed by an Argo Rollouts Rollout are skipped: the controller rewrites their weights at
every step (the RL2xxx rules check those).

Fix: give every destination an explicit weight and make them sum to 100.`,
		Bad: `
  http:
  - route:
    - destination: {host: reviews, subset: v1}
      weight: 90
    - destination: {host: reviews, subset: v2}
      weight: 20
`,
		Good: `
  http:
  - route:
    - destination: {host: reviews, subset: v1}
      weight: 80
    - destination: {host: reviews, subset: v2}
      weight: 20
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		g := p.Graph
		eachVirtualService(p, func(r *graph.Resource, vs *networkingVS) {
			for _, e := range routesOf(g, r, vs) {
				if len(e.dests) < 2 || managedRoute(g, r, e) {
					continue
				}
				var sum int64
				var parts []string
				for _, d := range e.dests {
					sum += int64(d.Weight)
				}
				if sum == 0 {
					p.ReportDiag(rules.Diagnostic{Resource: r, Path: e.path() + ".route", Severity: rules.Error,
						Message: fmt.Sprintf("%s of VirtualService %s has %d destinations and every weight is 0 or unset", e.name(), objectName(r), len(e.dests)),
						Detail:  "Istio rejects the VirtualService (total destination weight = 0)."})
					continue
				}
				if sum == 100 {
					continue
				}
				for _, d := range e.dests {
					parts = append(parts, fmt.Sprintf("%s %d → %.4g%%", destLabel(d), d.Weight, float64(d.Weight)*100/float64(sum)))
				}
				p.ReportDetail(r, e.dests[0].WeightPath(), fmt.Sprintf("weights of %s in VirtualService %s sum to %d, not 100", e.name(), objectName(r), sum),
					fmt.Sprintf("Istio rescales them, so the split is %s. Make them sum to 100.", strings.Join(parts, ", ")))
			}
		})
		return nil
	},
}
