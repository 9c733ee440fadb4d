package rollout

import (
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
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		eachStep(p, func(r *graph.Resource, ro *v1alpha1.Rollout, i int, s *v1alpha1.CanaryStep, path string) {
			tr := routingOf(ro)
			check := func(key, name string, capable []string) {
				at := path + "." + key
				if !anyRouter(tr, capable...) {
					p.Reportf(r, at, "step %d: %s needs traffic routing through %s, but the Rollout has %s; Argo Rollouts marks it InvalidSpec",
						i, key, strings.Join(capable, ", "), routerList(tr))
					return
				}
				if tr.ManagedRoutes == nil {
					p.Reportf(r, at, "step %d: %s %q needs spec.strategy.canary.trafficRouting.managedRoutes listing it, so the controller can add and later remove the route",
						i, key, name)
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
					Message: "step " + itoa(i) + ": " + key + " route \"" + name + "\" is not in managedRoutes [" + strings.Join(names, ", ") + "]; Argo Rollouts marks the Rollout InvalidSpec",
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
