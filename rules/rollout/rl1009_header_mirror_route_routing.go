package rollout

import (
	"fmt"
	"sort"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// RouteSteps reports setHeaderRoute and setMirrorRoute steps that the
// Rollout's traffic routing cannot carry out.
var RouteSteps = &rules.Rule{
	ID: "RL1009", Name: "header-mirror-route-routing", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout", "traffic"},
	Summary: "setHeaderRoute/setMirrorRoute without a capable router, without managedRoutes, or naming a route not in managedRoutes.",
	Doc: rules.Doc{
		Why: `\'setHeaderRoute\' and \'setMirrorRoute\' make Argo Rollouts add a named route to the router's
configuration (for Istio: an http route placed before the weighted ones). They need a
router that can do it (header routes: Istio, ALB, Apisix or a plugin; mirror routes: Istio or
a plugin), and the route name must be declared in \'trafficRouting.managedRoutes\' so the
controller knows where to insert it and can remove it at the end. Otherwise the Rollout is
\'InvalidSpec\' ("SetHeaderRoute requires TrafficRouting...", "Steps define a route that does
not exist in spec.strategy.canary.trafficRouting.managedRoutes").`,
		Bad: `
      trafficRouting:
        istio:
          virtualService: {name: checkout, routes: [primary]}
      steps:
      - setHeaderRoute:
          name: header-canary
          match:
          - headerName: x-canary
            headerValue: {exact: "true"}
`,
		Good: `
      trafficRouting:
        managedRoutes:
        - name: header-canary
        istio:
          virtualService: {name: checkout, routes: [primary]}
      steps:
      - setHeaderRoute:
          name: header-canary
          match:
          - headerName: x-canary
            headerValue: {exact: "true"}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachStep(p, func(r *graph.Resource, ro *v1alpha1.Rollout, i int, s *v1alpha1.CanaryStep, path string) {
			tr := routingOf(ro)
			check := func(key, name string, capable []string) {
				at := path + "." + key
				if !anyRouter(tr, capable...) {
					p.ReportDetail(r, at, fmt.Sprintf("step %d: the Rollout's routing (%s) cannot do %s", i, routerList(tr), key),
						fmt.Sprintf("%s needs traffic routing through %s; Argo Rollouts marks the Rollout InvalidSpec.", key, orList(capable)))
					return
				}
				if tr.ManagedRoutes == nil {
					p.ReportDetail(r, at, fmt.Sprintf("step %d: %s %q is in no managedRoutes", i, key, name),
						"List it under spec.strategy.canary.trafficRouting.managedRoutes, so that the controller can add the route and later remove it.")
					return
				}
				names := make([]string, 0, len(tr.ManagedRoutes))
				for _, m := range tr.ManagedRoutes {
					if m.Name == name {
						return
					}
					names = append(names, m.Name)
				}
				sort.Strings(names)
				p.ReportDiag(rules.Diagnostic{Resource: r, Path: at + ".name",
					Message: "step " + itoa(i) + ": " + key + " route \"" + name + "\" is not in managedRoutes [" + strings.Join(names, ", ") + "]",
					Detail:  "Argo Rollouts marks the Rollout InvalidSpec.",
					Related: []rules.Related{rules.RelatedAt(r, routingPath+".managedRoutes", "managedRoutes")}})
			}
			if s.SetHeaderRoute != nil {
				check("setHeaderRoute", s.SetHeaderRoute.Name, []string{"alb", "apisix", "istio", "plugins"})
			}
			if s.SetMirrorRoute != nil {
				check("setMirrorRoute", s.SetMirrorRoute.Name, []string{"istio", "plugins"})
			}
		})
		return nil
	},
}
