// Package traffic holds the RL2xxx rules: the wiring between a Rollout and the
// Services, VirtualService routes, DestinationRule subsets and weights it
// drives. They read the references the graph resolved once per bundle.
package traffic

import (
	"fmt"
	"sort"

	networkingv1 "istio.io/api/networking/v1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// hashLabel is the label Argo Rollouts adds to selectors and subsets at runtime.
const hashLabel = "rollouts-pod-template-hash"

// tags are the SARIF/doc tags of every rule in this package.
var tags = []string{"traffic"}

// serviceNames returns the Services Argo treats as stable and canary: the
// canary fields, or ping and pong when both are empty and pingPong is set (ping
// is stable until the first promotion).
func serviceNames(rr *graph.RolloutRefs) (stable, canary string) {
	c := rr.Spec.Spec.Strategy.Canary
	if c == nil {
		return "", ""
	}
	if c.StableService == "" && c.CanaryService == "" && c.PingPong != nil {
		return c.PingPong.PingService, c.PingPong.PongService
	}
	return c.StableService, c.CanaryService
}

// managedRoute is one VirtualService route a Rollout manages, resolved.
type managedRoute struct {
	Refs  *graph.RolloutRefs
	VS    *graph.VSRef
	Route *graph.RouteRef
	Spec  *networkingv1.VirtualService
	Dests []graph.Destination
}

// label names the route for messages: VirtualService ns/name http route "primary".
func (m managedRoute) label() string {
	return routeLabel(m.VS.Target, *m.Route)
}

func routeLabel(vs *graph.Resource, rt graph.RouteRef) string {
	name := fmt.Sprintf("%s[%d]", rt.Kind, rt.Index)
	if rt.Name != "" {
		name = fmt.Sprintf("%s route %q", rt.Kind, rt.Name)
	} else if rt.Index >= 0 {
		switch rt.Kind {
		case graph.HTTP:
			if n := vsSpec(vs).GetHttp()[rt.Index].GetName(); n != "" {
				name = fmt.Sprintf("http route %q", n)
			}
		}
	}
	return fmt.Sprintf("VirtualService %s/%s %s", vs.Namespace, vs.Name, name)
}

func vsSpec(r *graph.Resource) *networkingv1.VirtualService {
	if r == nil {
		return nil
	}
	if o := r.VirtualService(); o != nil {
		return &o.Spec
	}
	return nil
}

// managedRoutesMemo lists every managed route with its destinations once per
// lint for the four rules that walk them. Read only.
var managedRoutesMemo = graph.NewMemo[[]managedRoute]("traffic.managedRoutes")

// eachManagedRoute calls fn for every existing route every Rollout the pass
// scans manages (rules.Pass.Rollouts), in bundle order. The Dests are shared:
// fn must not modify them.
func eachManagedRoute(p *rules.Pass, fn func(m managedRoute)) {
	all := managedRoutesMemo.Get(p.Graph, func() []managedRoute { return managedRoutes(p.Graph) })
	for _, m := range rules.ShardPart(p, all, kinds.Rollout, func(m managedRoute) *graph.Resource { return m.Refs.Rollout }) {
		fn(m)
	}
}

// managedRoutes lists eachManagedRoute's routes.
func managedRoutes(g *graph.Graph) []managedRoute {
	var out []managedRoute
	for _, rr := range g.Refs().Rollouts {
		for i := range rr.VirtualServices {
			vs := &rr.VirtualServices[i]
			spec := vsSpec(vs.Target)
			if spec == nil {
				continue
			}
			for j := range vs.Routes {
				rt := &vs.Routes[j]
				if rt.Index < 0 {
					continue
				}
				out = append(out, managedRoute{Refs: rr, VS: vs, Route: rt, Spec: spec, Dests: graph.RouteDestinations(spec, rt.Kind, rt.Index)})
			}
		}
	}
	return out
}

// role is what Argo does with a destination of a managed route.
type role int

const (
	roleOther role = iota
	roleCanary
	roleStable
	roleAdditional
)

// classify applies the controller's order: canary (short host or subset),
// stable, then additionalSubsetNames; anything else is deleted on SetWeight.
func classify(rr *graph.RolloutRefs, d graph.Destination) role {
	stable, canary := serviceNames(rr)
	short := graph.ShortHost(d.Host)
	var stableSub, canarySub string
	var additional []string
	if dr := rr.DestinationRule; dr != nil {
		stableSub, canarySub, additional = dr.StableSubset, dr.CanarySubset, dr.AdditionalSubsets
	}
	switch {
	case canary != "" && short == canary, d.Subset != "" && d.Subset == canarySub:
		return roleCanary
	case stable != "" && short == stable, d.Subset != "" && d.Subset == stableSub:
		return roleStable
	}
	for _, s := range additional {
		if d.Subset != "" && d.Subset == s {
			return roleAdditional
		}
	}
	return roleOther
}

// sameObject reports whether two resources are the same object defined twice.
func sameObject(a, b *graph.Resource) bool {
	return a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name
}

// othersRelated lists related locations at other Rollouts' fields. Rollouts
// sharing an object are reported once, on the first of them in file order:
// for the others it returns nothing.
func othersRelated(list []*graph.RolloutRefs, self *graph.RolloutRefs, path func(*graph.RolloutRefs) string, msg func(*graph.RolloutRefs) string) ([]rules.Related, []string) {
	var rel []rules.Related
	var names []string
	for _, o := range list {
		if o == self || sameObject(o.Rollout, self.Rollout) {
			continue // a Rollout defined twice in the bundle is not sharing
		}
		if o.Rollout.Before(self.Rollout) {
			return nil, nil // reported on o
		}
		rel = append(rel, rules.PeerAt(o.Rollout, path(o), msg(o)))
		names = append(names, o.Rollout.Namespace+"/"+o.Rollout.Name)
	}
	sort.Strings(names)
	return rel, names
}

// objectName is namespace/name, the way messages name objects.
func objectName(r *graph.Resource) string { return r.Namespace + "/" + r.Name }
