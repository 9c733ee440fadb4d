package traffic

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// SharedRoute reports a VirtualService route managed by more than one Rollout.
var SharedRoute = &rules.Rule{
	ID: "RL2001", Name: "shared-route", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.VirtualService}, Tags: tags,
	Summary: "Two or more Rollouts manage the same VirtualService route.",
	Doc: rules.Doc{
		Why: `Argo Rollouts has no lock on a VirtualService route. When two Rollouts manage the same
route (the same VirtualService and the same named http route, tls/tcp match, or the implicit
single route used when \'routes\' is omitted), each controller reconcile rewrites the whole
route: every destination that is not its own stable or canary is deleted. The two Rollouts
then delete each other's destinations on every step, the weights flap, and requests for the
other application fail or land on the wrong pods.

Fix: give each Rollout its own route (a named http route per Rollout, listed in
\'virtualService.routes\'), or its own VirtualService.`,
		Bad: `
# Rollouts "cart" and "checkout" both omit routes: both manage the single route.
trafficRouting:
  istio:
    virtualService: {name: shop}
`,
		Good: `
# cart
trafficRouting:
  istio:
    virtualService: {name: shop, routes: [cart]}
# checkout
trafficRouting:
  istio:
    virtualService: {name: shop, routes: [checkout]}
`,
	},
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		x := p.Graph.Refs()
		for _, k := range x.SharedRouteKeys() { // a route one Rollout use manages is not shared
			users := x.RouteUsers(k)
			owners := map[graph.ObjectKey]bool{} // a Rollout defined twice is not sharing
			for _, u := range users {
				r := u.Refs.Rollout
				owners[graph.ObjectKey{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}] = true
			}
			if len(owners) < 2 {
				continue
			}
			first := users[0]
			for _, u := range users[1:] {
				if u.Refs.Rollout.Before(first.Refs.Rollout) {
					first = u
				}
			}
			for _, u := range users {
				if u.Refs.Rollout != first.Refs.Rollout {
					continue // the sharing is reported once, on the first Rollout
				}
				var rel []rules.Related
				var names []string
				for _, o := range users {
					if o.Refs == u.Refs || sameObject(o.Refs.Rollout, u.Refs.Rollout) {
						continue
					}
					n := o.Refs.Rollout.Namespace + "/" + o.Refs.Rollout.Name
					names = append(names, n)
					rel = append(rel, rules.PeerAt(o.Refs.Rollout, o.Route.Path, "Rollout "+n+" manages the same route"))
				}
				implicit := ""
				if u.Route.Implicit {
					implicit = " (implicitly: no routes listed)"
				}
				vs := u.VS.Target
				rel = append(rel, rules.RelatedAt(vs, u.Route.VSPath(), "the shared route"))
				p.ReportDetail(u.Refs.Rollout, u.Route.Path, fmt.Sprintf("%s is also managed by Rollout %s%s", routeLabel(vs, *u.Route), strings.Join(names, ", "), implicit),
					"Each Rollout deletes the other's destinations on every weight change.", rel...)
			}
		}
		return nil
	},
}
